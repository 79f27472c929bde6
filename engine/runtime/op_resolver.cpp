#include "engine/runtime/op_resolver.h"

#include <cstring>

namespace gruwb {

const KernelRegistration* OpResolver::find(int32_t op_code, const char* custom_code) const {
  for (int i = 0; i < count; ++i) {
    const KernelRegistration* kernel = kernels[i];
    if (kernel->op_code != op_code) continue;
    if (op_code == kOpCustom &&
        (!custom_code || !kernel->custom_code || strcmp(custom_code, kernel->custom_code) != 0)) {
      continue;
    }
    return kernel;
  }
  return nullptr;
}

}  // namespace gruwb
