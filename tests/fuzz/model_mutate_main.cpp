// model_mutate: writes structurally mutated copies of a model (tests/fuzz/model_mutator.h), for
// tests/fuzz/mutant_census.py and for reproducing a fuzzer finding by its seed.
//   model_mutate MODEL OUT_DIR COUNT [FIRST_SEED]
// Writes OUT_DIR/<stem>-<seed>.<ext> for seeds FIRST_SEED.. and prints "<file>\t<edits>" per
// mutant.

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/fuzz/model_mutator.h"

int main(int argc, char** argv) {
  if (argc < 4 || argc > 5) {
    std::fprintf(stderr, "usage: model_mutate MODEL OUT_DIR COUNT [FIRST_SEED]\n");
    return 2;
  }
  const std::string path = argv[1];
  const std::string out_dir = argv[2];
  const long count = std::strtol(argv[3], nullptr, 10);
  const unsigned long long first_seed = argc == 5 ? std::strtoull(argv[4], nullptr, 10) : 1;
  std::ifstream in(path, std::ios::binary);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
  const size_t slash = path.find_last_of('/');
  const std::string file = slash == std::string::npos ? path : path.substr(slash + 1);
  const size_t dot = file.find_last_of('.');
  const std::string stem = file.substr(0, dot);
  const std::string ext = dot == std::string::npos ? ".tflite" : file.substr(dot);
  long written = 0;
  for (long i = 0; i < count; ++i) {
    const unsigned long long seed = first_seed + static_cast<unsigned long long>(i);
    gruwb::fuzz::Mutant mutant;
    if (!gruwb::fuzz::mutate_model(bytes.data(), bytes.size(), seed, &mutant)) continue;
    const std::string out = out_dir + "/" + stem + "-" + std::to_string(seed) + ext;
    std::ofstream(out, std::ios::binary)
        .write(reinterpret_cast<const char*>(mutant.bytes.data()),
               static_cast<std::streamsize>(mutant.bytes.size()));
    std::printf("%s\t%s\n", out.c_str(), mutant.description.c_str());
    ++written;
  }
  if (written == 0) {
    std::fprintf(stderr, "model_mutate: %s is no verifiable model (or no edit applied)\n",
                 path.c_str());
    return 2;
  }
  return 0;
}
