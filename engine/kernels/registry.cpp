// The kernel registration table: one entry per op code (plus custom codes).
// Adding an op touches its kernel file, this table and its test.

#include <cstring>

#include "engine/kernels/op_support.h"
#include "engine/runtime/kernel.h"

namespace gruwb {

extern const KernelRegistration kAddKernel;
extern const KernelRegistration kSubKernel;
extern const KernelRegistration kMulKernel;
extern const KernelRegistration kMinimumKernel;
extern const KernelRegistration kMaximumKernel;
extern const KernelRegistration kLessKernel;
extern const KernelRegistration kLessEqualKernel;
extern const KernelRegistration kGreaterKernel;
extern const KernelRegistration kGreaterEqualKernel;
extern const KernelRegistration kEqualKernel;
extern const KernelRegistration kNotEqualKernel;
extern const KernelRegistration kLogisticKernel;
extern const KernelRegistration kTanhKernel;
extern const KernelRegistration kReluKernel;
extern const KernelRegistration kRelu6Kernel;
extern const KernelRegistration kFullyConnectedKernel;
extern const KernelRegistration kSoftmaxKernel;
extern const KernelRegistration kReshapeKernel;
extern const KernelRegistration kExpandDimsKernel;
extern const KernelRegistration kSqueezeKernel;
extern const KernelRegistration kWhileKernel;
extern const KernelRegistration kGatherKernel;
extern const KernelRegistration kStridedSliceKernel;
extern const KernelRegistration kSliceKernel;
extern const KernelRegistration kConcatenationKernel;
extern const KernelRegistration kSplitKernel;
extern const KernelRegistration kSplitVKernel;
extern const KernelRegistration kPackKernel;
extern const KernelRegistration kUnpackKernel;
extern const KernelRegistration kTransposeKernel;
extern const KernelRegistration kShapeKernel;
extern const KernelRegistration kFillKernel;
extern const KernelRegistration kCastKernel;
extern const KernelRegistration kUnidirectionalSequenceLstmKernel;
extern const KernelRegistration kUnidirectionalSequenceRnnKernel;
extern const KernelRegistration kGruKernel;
extern const KernelRegistration kGruCustomKernel;
extern const KernelRegistration kIfKernel;
extern const KernelRegistration kCallOnceKernel;
extern const KernelRegistration kVarHandleKernel;
extern const KernelRegistration kAssignVariableKernel;
extern const KernelRegistration kReadVariableKernel;

namespace {

const KernelRegistration* const kKernels[] = {
    &kAddKernel,          &kSubKernel,         &kMulKernel,          &kMinimumKernel,
    &kMaximumKernel,      &kLessKernel,        &kLessEqualKernel,    &kGreaterKernel,
    &kGreaterEqualKernel, &kEqualKernel,       &kNotEqualKernel,     &kLogisticKernel,
    &kTanhKernel,         &kReluKernel,        &kRelu6Kernel,        &kFullyConnectedKernel,
    &kSoftmaxKernel,      &kReshapeKernel,     &kExpandDimsKernel,   &kSqueezeKernel,
    &kWhileKernel,        &kIfKernel,          &kCallOnceKernel,     &kVarHandleKernel,
    &kAssignVariableKernel, &kReadVariableKernel,
    // data movement
    &kGatherKernel, &kStridedSliceKernel, &kSliceKernel, &kConcatenationKernel,
    &kSplitKernel, &kSplitVKernel, &kPackKernel, &kUnpackKernel,
    &kTransposeKernel, &kShapeKernel, &kFillKernel, &kCastKernel,
    // recurrent
    &kUnidirectionalSequenceLstmKernel, &kUnidirectionalSequenceRnnKernel, &kGruKernel,
    &kGruCustomKernel,
};

}  // namespace

const KernelRegistration* find_kernel(int32_t op_code, const char* custom_code) {
  for (const KernelRegistration* kernel : kKernels) {
    if (kernel->op_code != op_code) continue;
    if (op_code == kOpCustom &&
        (!custom_code || !kernel->custom_code || strcmp(custom_code, kernel->custom_code) != 0)) {
      continue;
    }
    return kernel;
  }
  return nullptr;
}

bool engine_supports_op(int32_t op_code) {
  // Custom ops are matched by code too; this coarse query answers for builtins.
  return op_code != kOpCustom && find_kernel(op_code, nullptr) != nullptr;
}

}  // namespace gruwb
