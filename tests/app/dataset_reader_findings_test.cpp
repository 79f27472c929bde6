// Inputs the dataset-reader fuzzers (tests/fuzz/dataset_reader_fuzz.cpp) found that broke a
// reader, each named after what broke. Every one must now fail with one line naming the file and
// the problem, not throw, abort or read out of bounds.

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "app/core/dataset.h"

namespace gruwb::app {
namespace {

std::string write_file(const std::string& name, const std::string& bytes) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// A version 1.0 .npy: magic, version, u16 header length, the header dict, data.
std::string npy(const std::string& header, const std::string& data) {
  std::string bytes = "\x93NUMPY\x01";
  bytes += '\0';
  bytes += static_cast<char>(header.size() & 0xFF);
  bytes += static_cast<char>(header.size() >> 8);
  return bytes + header + data;
}

const std::string kLabels =
    npy("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", std::string(8, '\0'));

void expect_one_line_error(const std::string& x, const std::string& y, const std::string& what) {
  Dataset out;
  std::string error;
  EXPECT_FALSE(load_npy_pair(x, y, &out, &error));
  EXPECT_NE(error.find(what), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  EXPECT_EQ(error.rfind(x + ": ", 0), 0u) << error;
}

// `'descr':,` made the reader take substr(1, -1) of an empty string: std::out_of_range, which
// nothing caught, so `gruwb data` aborted.
TEST(NpyHeader, EmptyDescrIsRefusedNotThrown) {
  const std::string x = write_file(
      "empty_descr.npy",
      npy("{'descr':, 'fortran_order': False, 'shape': (2, 3), }", std::string(24, '\0')));
  expect_one_line_error(x, write_file("labels.npy", kLabels), "malformed descr");
  const std::string unquoted =
      write_file("unquoted_descr.npy", npy("{'descr': f4, 'fortran_order': False, 'shape': (2, "
                                           "3), }",
                                           std::string(24, '\0')));
  expect_one_line_error(unquoted, write_file("labels.npy", kLabels), "malformed descr");
}

// Dimensions up to 2^40 each: their product overflowed int64 (undefined behaviour) and the
// byte count wrapped, so a lying header could match a short file.
TEST(NpyHeader, ShapeWhoseByteSizeOverflows) {
  const std::string x = write_file(
      "huge_shape.npy",
      npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 1099511627776, 16), }",
          std::string(16, '\0')));
  expect_one_line_error(x, write_file("labels.npy", kLabels), "has more bytes than fit in memory");
}

}  // namespace
}  // namespace gruwb::app
