// The kernel registration table: every kernel of the engine, from
// kernel_list.h. A build's default table (engine/runtime/op_resolver.h) is
// this one on the host and a generated subset on a board.

#include "engine/kernels/recurrent_util.h"
#include "engine/runtime/op_resolver.h"

namespace gruwb {

#define GRUWB_DECLARE_KERNEL(name, registration) extern const KernelRegistration registration;
GRUWB_ALL_KERNELS(GRUWB_DECLARE_KERNEL)
#undef GRUWB_DECLARE_KERNEL

namespace {

#define GRUWB_KERNEL_ADDRESS(name, registration) &registration,
const KernelRegistration* const kAllKernels[] = {GRUWB_ALL_KERNELS(GRUWB_KERNEL_ADDRESS)};
#undef GRUWB_KERNEL_ADDRESS

static_assert(sizeof kAllKernels / sizeof kAllKernels[0] == kAllOpCount, "kernel_list.h count");

}  // namespace

const OpResolver& all_ops() {
  static const OpResolver resolver = {kAllKernels, kAllOpCount, "all"};
  return resolver;
}

#if defined(GRUWB_CLONED_HOT_LOOPS)
extern const KernelRegistration kGruPackedKernel;
extern const KernelRegistration kGruCustomPackedKernel;
extern const KernelRegistration kUnidirectionalSequenceLstmPackedKernel;
extern const KernelRegistration kUnidirectionalSequenceRnnPackedKernel;

const OpResolver& packed_inference_ops() {
  // Copied once from the default table (plugins add their ops at start-up, before this).
  static const KernelRegistration* kernels[kAllOpCount + kMaxAddedOps] = {};
  static const OpResolver resolver = [] {
    const OpResolver& base = default_op_resolver();
    const KernelRegistration* const replaced[][2] = {
        {&kGruKernel, &kGruPackedKernel},
        {&kGruCustomKernel, &kGruCustomPackedKernel},
        {&kUnidirectionalSequenceLstmKernel, &kUnidirectionalSequenceLstmPackedKernel},
        {&kUnidirectionalSequenceRnnKernel, &kUnidirectionalSequenceRnnPackedKernel}};
    int count = 0;
    for (int i = 0; i < base.count && count < kAllOpCount + kMaxAddedOps; ++i) {
      const KernelRegistration* kernel = base.kernels[i];
      for (const auto& pair : replaced) {
        if (kernel == pair[0]) kernel = pair[1];
      }
      kernels[count++] = kernel;
    }
    return OpResolver{kernels, count, base.name};
  }();
  return resolver;
}
#endif

}  // namespace gruwb
