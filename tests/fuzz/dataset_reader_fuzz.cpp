// libFuzzer targets for the dataset readers (app/core/dataset.h), one executable per format:
// GRUWB_FUZZ_FORMAT is 1 .ts, 2 .arff, 3 .csv, 4 .npy pair, 5 .npz (tests/fuzz/CMakeLists.txt).
// The readers take paths, so each input is written to an in-memory file (memfd) and read back
// through /proc/self/fd. A .npy pair is one input: a u16 (LE) length of x.npy, x.npy, y.npy.
// Whatever loads is then summarised and prepared for a model input, as `gruwb data` and
// `gruwb experiment` would, so a reader that lets a lie through shows up downstream too.

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "app/core/dataset.h"

namespace {

// One in-memory file, rewritten for every input.
class MemoryFile {
 public:
  explicit MemoryFile(const char* name) : fd_(memfd_create(name, 0)) {
    if (fd_ < 0) abort();
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  const std::string& write(const uint8_t* data, size_t size) {
    if (ftruncate(fd_, 0) != 0) abort();
    size_t done = 0;
    while (done < size) {
      const ssize_t n = pwrite(fd_, data + done, size - done, static_cast<off_t>(done));
      if (n <= 0) abort();
      done += static_cast<size_t>(n);
    }
    return path_;
  }

 private:
  int fd_;
  std::string path_;
};

void prepare(const gruwb::app::DatasetFiles& files) {
  gruwb::app::dataset_summary(files);
  gruwb::app::PrepareOptions options;
  options.timesteps = 16;
  options.length_policy = gruwb::app::LengthPolicy::kResample;
  options.validation_fraction = 0.25;
  gruwb::app::PreparedData prepared;
  std::string error;
  gruwb::app::prepare_dataset(files, options, &prepared, &error);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static MemoryFile first("fuzz-dataset"), second("fuzz-labels");
  gruwb::app::DatasetFiles files;
  std::string error;
  bool loaded = false;
#if GRUWB_FUZZ_FORMAT == 1
  loaded = gruwb::app::load_ts(first.write(data, size), &files.train, &error);
#elif GRUWB_FUZZ_FORMAT == 2
  loaded = gruwb::app::load_arff(first.write(data, size), &files.train, &error);
#elif GRUWB_FUZZ_FORMAT == 3
  loaded = gruwb::app::load_csv(first.write(data, size), &files, &error);
#elif GRUWB_FUZZ_FORMAT == 4
  if (size < 2) return 0;
  size_t x_bytes = data[0] | static_cast<size_t>(data[1]) << 8;
  if (x_bytes > size - 2) x_bytes = size - 2;
  const std::string& x = first.write(data + 2, x_bytes);
  const std::string& y = second.write(data + 2 + x_bytes, size - 2 - x_bytes);
  loaded = gruwb::app::load_npy_pair(x, y, &files.train, &error);
#elif GRUWB_FUZZ_FORMAT == 5
  loaded = gruwb::app::load_npz(first.write(data, size), &files, &error);
#else
#error "GRUWB_FUZZ_FORMAT must be 1..5"
#endif
  // A refusal must say why.
  if (!loaded && error.empty()) abort();
  if (loaded) prepare(files);
  return 0;
}
