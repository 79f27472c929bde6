#pragma once
// A tiny read-only reader for the root map of a FlexBuffer (custom op options
// in .tflite files). flatbuffers' own flexbuffers.h pulls in std::string,
// std::vector and their heap, which the engine must not use on a board, and
// it trusts its input; this reader checks every offset against the buffer
// (custom_options are not covered by the flatbuffers Verifier).
//
// Only what op options need: bool, int/uint and string values of a root map.
// The host side writes options with the real flexbuffers::Builder.

#include <cstddef>
#include <cstdint>

namespace gruwb {

enum class FlexType : uint8_t {
  kNull = 0,
  kInt = 1,
  kUInt = 2,
  kFloat = 3,
  kKey = 4,
  kString = 5,
  kIndirectInt = 6,
  kIndirectUInt = 7,
  kIndirectFloat = 8,
  kMap = 9,
  kBool = 26,
};

struct FlexValue {
  FlexType type = FlexType::kNull;
  const uint8_t* slot = nullptr;  // where the value (or its offset) sits
  uint8_t slot_width = 0;         // bytes of that slot
  uint8_t target_width = 0;       // bytes of the pointed-to item (indirect types)
};

class FlexMap {
 public:
  // False when `data` is not a FlexBuffer whose root is a map, or when any
  // part of the map (keys, values, type bytes) lies outside the buffer.
  bool parse(const uint8_t* data, size_t size);

  size_t size() const { return count_; }
  // Key i (sorted order); nullptr if malformed.
  const char* key(size_t i) const;
  // Value of `key`; false when absent.
  bool find(const char* key, FlexValue* out) const;
  bool value_at(size_t i, FlexValue* out) const;

  // Typed reads: false when the value has another type or is malformed.
  bool as_bool(const FlexValue& value, bool* out) const;
  bool as_int(const FlexValue& value, int64_t* out) const;
  // Points into the buffer (NUL-terminated, checked).
  bool as_string(const FlexValue& value, const char** out) const;

 private:
  bool in_bounds(const uint8_t* p, size_t bytes) const;
  bool read_uint(const uint8_t* p, uint8_t width, uint64_t* out) const;
  bool indirect(const uint8_t* slot, uint8_t width, const uint8_t** out) const;
  bool c_string(const uint8_t* p, const char** out) const;

  const uint8_t* begin_ = nullptr;
  const uint8_t* end_ = nullptr;
  const uint8_t* values_ = nullptr;
  uint8_t value_width_ = 0;
  const uint8_t* keys_ = nullptr;
  uint8_t key_width_ = 0;
  size_t count_ = 0;
};

}  // namespace gruwb
