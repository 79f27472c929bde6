// write_converter_variants DIR: every generated converter variant as DIR/<name>.tflite with
// its reference outputs in DIR/golden/<name>/, so `gruwb corpus DIR` checks them all.

#include <cstdio>
#include <string>

#include "tests/tools/converter_variants.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_converter_variants DIR\n");
    return 2;
  }
  std::string error;
  if (!gruwb::test::write_variant_folder(argv[1], &error)) {
    std::fprintf(stderr, "write_converter_variants: %s\n", error.c_str());
    return 2;
  }
  std::printf("%zu variants written to %s\n", gruwb::test::converter_variants().size(), argv[1]);
  return 0;
}
