#pragma once
// custom_options of a Flex op as TensorFlow's converter writes them (tests only).

#include <flatbuffers/flexbuffers.h>

#include <cstdint>
#include <string>
#include <vector>

namespace gruwb::test {

namespace flex_detail {
inline void append_varint(std::vector<uint8_t>* out, uint64_t v) {
  do {
    uint8_t b = v & 0x7f;
    v >>= 7;
    out->push_back(static_cast<uint8_t>(b | (v ? 0x80 : 0)));
  } while (v);
}

inline void append_field(std::vector<uint8_t>* out, uint32_t number,
                         const std::vector<uint8_t>& bytes) {
  append_varint(out, (number << 3) | 2);
  append_varint(out, bytes.size());
  out->insert(out->end(), bytes.begin(), bytes.end());
}

}  // namespace flex_detail

// custom_options as the converter writes them: FlexBuffer vector [op, NodeDef], the NodeDef
// with attr element_dtype = `dtype` (TensorFlow's DataType: 1 float, 3 int32); dtype < 0
// leaves the attribute out.
inline std::vector<uint8_t> flex_node_def_options(const std::string& op, int dtype) {
  std::vector<uint8_t> node;
  flex_detail::append_field(&node, 2, std::vector<uint8_t>(op.begin(), op.end()));
  if (dtype >= 0) {
    std::vector<uint8_t> entry, attr;
    const std::string key = "element_dtype";
    flex_detail::append_field(&entry, 1, std::vector<uint8_t>(key.begin(), key.end()));
    flex_detail::append_varint(&attr, (6 << 3) | 0);
    flex_detail::append_varint(&attr, static_cast<uint64_t>(dtype));
    flex_detail::append_field(&entry, 2, attr);
    flex_detail::append_field(&node, 5, entry);
  }
  // Builder::String(data, size) copies size + 1 bytes (the terminator it expects).
  const size_t node_bytes = node.size();
  node.push_back(0);
  flexbuffers::Builder fbb;
  fbb.Vector([&] {
    fbb.String(op);
    fbb.String(reinterpret_cast<const char*>(node.data()), node_bytes);
  });
  fbb.Finish();
  return fbb.GetBuffer();
}

}  // namespace gruwb::test
