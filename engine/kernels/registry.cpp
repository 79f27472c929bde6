// The kernel registration table: every kernel of the engine, from
// kernel_list.h. A build's default table (engine/runtime/op_resolver.h) is
// this one on the host and a generated subset on a board.

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

}  // namespace gruwb
