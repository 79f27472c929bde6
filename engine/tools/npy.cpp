#include "engine/tools/npy.h"

#include <cstring>

#include "engine/model/checked_size.h"
#include "engine/tools/model_file.h"

namespace gruwb::tools {
namespace {

const char kMagic[] = "\x93NUMPY";

// Value text of `key` in the header dict, e.g. "'<f4'" or "(1, 60, 3)".
bool dict_value(const std::string& header, const std::string& key, std::string* value) {
  size_t at = header.find("'" + key + "'");
  if (at == std::string::npos) return false;
  size_t colon = header.find(':', at);
  if (colon == std::string::npos) return false;
  size_t start = header.find_first_not_of(' ', colon + 1);
  if (start == std::string::npos) return false;
  size_t end;
  if (header[start] == '(') {
    end = header.find(')', start);
    if (end == std::string::npos) return false;
    ++end;
  } else if (header[start] == '\'' || header[start] == '"') {
    end = header.find(header[start], start + 1);
    if (end == std::string::npos) return false;
    ++end;
  } else {
    end = header.find_first_of(",}", start);
    if (end == std::string::npos) return false;
  }
  *value = header.substr(start, end - start);
  return true;
}

bool parse_shape(const std::string& text, std::vector<int64_t>* shape) {
  shape->clear();
  size_t i = 1;  // after '('
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == ',')) ++i;
    if (i >= text.size() || text[i] == ')') return true;
    if (text[i] < '0' || text[i] > '9') return false;
    int64_t dim = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      dim = dim * 10 + (text[i] - '0');
      if (dim > (int64_t{1} << 40)) return false;
      ++i;
    }
    shape->push_back(dim);
  }
  return false;
}

}  // namespace

int64_t NpyArray::elements() const {
  uint64_t n = 0;
  if (!checked_element_count(shape.data(), shape.size(), uint64_t{INT64_MAX}, &n)) return -1;
  return static_cast<int64_t>(n);
}

bool npy_values(const NpyArray& a, const std::string& label, std::vector<double>* values,
                std::string* error) {
  const size_t n = static_cast<size_t>(a.elements());
  values->resize(n);
  const uint8_t* p = a.data.data();
  for (size_t i = 0; i < n; ++i) {
    if (a.dtype == "<f4") {
      float v;
      std::memcpy(&v, p + 4 * i, 4);
      (*values)[i] = v;
    } else if (a.dtype == "<f8") {
      std::memcpy(&(*values)[i], p + 8 * i, 8);
    } else if (a.dtype == "<i4") {
      int32_t v;
      std::memcpy(&v, p + 4 * i, 4);
      (*values)[i] = v;
    } else if (a.dtype == "<i8") {
      int64_t v;
      std::memcpy(&v, p + 8 * i, 8);
      (*values)[i] = static_cast<double>(v);
    } else if (a.dtype == "|u1") {
      (*values)[i] = p[i];
    } else if (a.dtype == "|i1") {
      (*values)[i] = static_cast<int8_t>(p[i]);
    } else {
      *error = label + ": dtype " + a.dtype + " is not supported (float32/64, int8/32/64, uint8)";
      return false;
    }
  }
  return true;
}

size_t npy_dtype_size(const std::string& dtype) {
  if (dtype == "<f4" || dtype == "<i4" || dtype == "<u4") return 4;
  if (dtype == "<f8" || dtype == "<i8" || dtype == "<u8") return 8;
  if (dtype == "<i2" || dtype == "<u2" || dtype == "<f2") return 2;
  if (dtype == "|b1" || dtype == "|u1" || dtype == "|i1") return 1;
  return 0;
}

std::string npy_shape_text(const std::vector<int64_t>& shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) text += ", ";
    text += std::to_string(shape[i]);
  }
  if (shape.size() == 1) text += ",";
  return text + ")";
}

bool parse_npy(const std::vector<uint8_t>& bytes, const std::string& label, NpyArray* out,
               std::string* error) {
  auto fail = [&](const std::string& why) {
    *error = label + ": " + why;
    return false;
  };
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, 6) != 0) {
    return fail("not a NumPy .npy file (missing \\x93NUMPY magic)");
  }
  uint8_t major = bytes[6];
  size_t header_len = 0;
  size_t offset = 0;
  if (major == 1) {
    header_len = bytes[8] | (bytes[9] << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return fail("truncated .npy header");
    header_len = bytes[8] | (bytes[9] << 8) | (bytes[10] << 16) | (size_t{bytes[11]} << 24);
    offset = 12;
  } else {
    return fail("unsupported .npy format version " + std::to_string(major));
  }
  if (header_len > bytes.size() - offset) return fail("truncated .npy header");
  std::string header(reinterpret_cast<const char*>(bytes.data() + offset), header_len);
  std::string descr, fortran, shape_text;
  if (!dict_value(header, "descr", &descr) || !dict_value(header, "fortran_order", &fortran) ||
      !dict_value(header, "shape", &shape_text)) {
    return fail("malformed .npy header: " + header);
  }
  if (descr.size() < 2 || descr.back() != descr.front() ||
      (descr.front() != '\'' && descr.front() != '"')) {
    return fail("malformed descr " + descr + " (a quoted dtype such as '<f4')");
  }
  out->dtype = descr.substr(1, descr.size() - 2);
  if (out->dtype == "=f4" || out->dtype == "=i4") out->dtype[0] = '<';  // native = LE here
  if (fortran.rfind("True", 0) == 0)
    return fail("fortran_order arrays are not supported; save in C order");
  if (!parse_shape(shape_text, &out->shape)) return fail("malformed shape " + shape_text);
  size_t element = npy_dtype_size(out->dtype);
  if (element == 0) return fail("unsupported dtype '" + out->dtype + "'");
  const int64_t elements = out->elements();
  uint64_t expected64 = 0;
  size_t expected = 0;
  if (elements < 0 ||
      !checked_mul(static_cast<uint64_t>(elements), uint64_t{element}, &expected64) ||
      !fits_size_t(expected64, &expected)) {
    return fail("shape " + npy_shape_text(out->shape) + " " + out->dtype +
                " has more bytes than fit in memory");
  }
  size_t available = bytes.size() - offset - header_len;
  if (available != expected) {
    return fail("data has " + std::to_string(available) + " bytes, shape " +
                npy_shape_text(out->shape) + " " + out->dtype + " needs " +
                std::to_string(expected));
  }
  out->data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(offset + header_len), bytes.end());
  return true;
}

bool read_npy(const std::string& path, NpyArray* out, std::string* error) {
  std::vector<uint8_t> bytes;
  if (!read_file_bytes(path, &bytes, error)) return false;
  return parse_npy(bytes, path, out, error);
}

std::vector<uint8_t> encode_npy(const NpyArray& array) {
  std::string header = "{'descr': '" + array.dtype +
                       "', 'fortran_order': False, 'shape': " + npy_shape_text(array.shape) + ", }";
  // Pad so that the data starts at a multiple of 64 bytes, as NumPy does.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::vector<uint8_t> bytes(kMagic, kMagic + 6);
  bytes.push_back(1);
  bytes.push_back(0);
  bytes.push_back(static_cast<uint8_t>(header.size() & 0xff));
  bytes.push_back(static_cast<uint8_t>(header.size() >> 8));
  bytes.insert(bytes.end(), header.begin(), header.end());
  bytes.insert(bytes.end(), array.data.begin(), array.data.end());
  return bytes;
}

bool write_npy(const std::string& path, const NpyArray& array, std::string* error) {
  return write_file_atomically(path, encode_npy(array), error);
}

}  // namespace gruwb::tools
