#pragma once
// NumPy .npy arrays (format versions 1.0-3.0, C order, little-endian): the
// interchange format of `gruwb run`, fixtures and weight exports.

#include <cstdint>
#include <string>
#include <vector>

namespace gruwb::tools {

struct NpyArray {
  std::string dtype;  // NumPy descr: "<f4", "<i4", "|b1", "<i8", "<f8", "|u1", "|i1"
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;  // raw little-endian elements, C order

  int64_t elements() const;
};

size_t npy_dtype_size(const std::string& dtype);  // 0 if unsupported

// Every element as double (float32/64, int8/32/64, uint8); `label` names the
// array when its dtype is not one of those.
bool npy_values(const NpyArray& array, const std::string& label, std::vector<double>* values,
                std::string* error);

// Parses .npy bytes; `label` names them in errors ("x.npy: fortran_order arrays are not
// supported").
bool parse_npy(const std::vector<uint8_t>& bytes, const std::string& label, NpyArray* out,
               std::string* error);
bool read_npy(const std::string& path, NpyArray* out, std::string* error);

std::vector<uint8_t> encode_npy(const NpyArray& array);
bool write_npy(const std::string& path, const NpyArray& array, std::string* error);  // atomic

// "(1, 60, 3)"
std::string npy_shape_text(const std::vector<int64_t>& shape);

}  // namespace gruwb::tools
