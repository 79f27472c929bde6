#include "engine/kernels/flexbuffer_map.h"

#include <cstring>

// FlexBuffer layout (little-endian): the buffer ends with the root value, its
// packed type (type << 2 | log2 width) and its width. A map's data is a
// vector of value slots followed by one packed type byte per value; before
// the data sit 3 fields of the map's width: the offset to the sorted keys
// vector, that vector's width, and the element count. Offsets point
// backwards: target = slot - value.

namespace gruwb {
namespace {

bool valid_width(uint64_t width) { return width == 1 || width == 2 || width == 4 || width == 8; }

}  // namespace

bool FlexMap::in_bounds(const uint8_t* p, size_t bytes) const {
  return p >= begin_ && p <= end_ && bytes <= static_cast<size_t>(end_ - p);
}

bool FlexMap::read_uint(const uint8_t* p, uint8_t width, uint64_t* out) const {
  if (!valid_width(width) || !in_bounds(p, width)) return false;
  uint64_t value = 0;
  for (uint8_t i = 0; i < width; ++i) value |= static_cast<uint64_t>(p[i]) << (8 * i);
  *out = value;
  return true;
}

bool FlexMap::indirect(const uint8_t* slot, uint8_t width, const uint8_t** out) const {
  uint64_t offset = 0;
  if (!read_uint(slot, width, &offset)) return false;
  if (offset > static_cast<uint64_t>(slot - begin_)) return false;
  *out = slot - offset;
  return true;
}

bool FlexMap::c_string(const uint8_t* p, const char** out) const {
  if (!in_bounds(p, 1)) return false;
  const void* nul = memchr(p, 0, static_cast<size_t>(end_ - p));
  if (!nul) return false;
  *out = reinterpret_cast<const char*>(p);
  return true;
}

bool FlexMap::parse(const uint8_t* data, size_t size) {
  *this = FlexMap();
  if (!data || size < 3) return false;
  begin_ = data;
  end_ = data + size;
  uint8_t root_width = data[size - 1];
  uint8_t packed = data[size - 2];
  if (!valid_width(root_width) || size < 2u + root_width) return false;
  if (static_cast<FlexType>(packed >> 2) != FlexType::kMap) return false;
  const uint8_t* root_slot = data + size - 2 - root_width;
  const uint8_t* map = nullptr;
  if (!indirect(root_slot, root_width, &map)) return false;
  uint8_t width = static_cast<uint8_t>(1u << (packed & 3));
  if (map - begin_ < 3 * width) return false;
  uint64_t count = 0, keys_width = 0;
  if (!read_uint(map - width, width, &count)) return false;
  if (!read_uint(map - 2 * width, width, &keys_width) || !valid_width(keys_width)) return false;
  const uint8_t* keys = nullptr;
  if (!indirect(map - 3 * width, width, &keys)) return false;
  if (count > size) return false;  // also keeps the products below from overflowing
  uint64_t keys_count = 0;
  if (static_cast<uint64_t>(keys - begin_) < keys_width) return false;
  if (!read_uint(keys - keys_width, static_cast<uint8_t>(keys_width), &keys_count) ||
      keys_count != count) {
    return false;
  }
  if (!in_bounds(keys, count * keys_width) || !in_bounds(map, count * width + count)) return false;
  values_ = map;
  value_width_ = width;
  keys_ = keys;
  key_width_ = static_cast<uint8_t>(keys_width);
  count_ = static_cast<size_t>(count);
  return true;
}

const char* FlexMap::key(size_t i) const {
  if (i >= count_) return nullptr;
  const uint8_t* target = nullptr;
  const char* text = nullptr;
  if (!indirect(keys_ + i * key_width_, key_width_, &target) || !c_string(target, &text)) {
    return nullptr;
  }
  return text;
}

bool FlexMap::value_at(size_t i, FlexValue* out) const {
  if (i >= count_) return false;
  uint8_t packed = values_[count_ * value_width_ + i];
  out->type = static_cast<FlexType>(packed >> 2);
  out->slot = values_ + i * value_width_;
  out->slot_width = value_width_;
  out->target_width = static_cast<uint8_t>(1u << (packed & 3));
  return true;
}

bool FlexMap::find(const char* wanted, FlexValue* out) const {
  for (size_t i = 0; i < count_; ++i) {
    const char* k = key(i);
    if (k && strcmp(k, wanted) == 0) return value_at(i, out);
  }
  return false;
}

bool FlexMap::as_int(const FlexValue& value, int64_t* out) const {
  const uint8_t* p = value.slot;
  uint8_t width = value.slot_width;
  bool is_signed = false;
  switch (value.type) {
    case FlexType::kInt: is_signed = true; break;
    case FlexType::kUInt:
    case FlexType::kBool: break;
    case FlexType::kIndirectInt:
    case FlexType::kIndirectUInt:
      if (!indirect(value.slot, value.slot_width, &p)) return false;
      width = value.target_width;
      is_signed = value.type == FlexType::kIndirectInt;
      break;
    default: return false;
  }
  uint64_t raw = 0;
  if (!read_uint(p, width, &raw)) return false;
  if (is_signed && width < 8 && (raw >> (8 * width - 1)) != 0) {
    raw |= ~uint64_t{0} << (8 * width);  // sign-extend
  }
  *out = static_cast<int64_t>(raw);
  return true;
}

bool FlexMap::as_bool(const FlexValue& value, bool* out) const {
  int64_t v = 0;
  if (!as_int(value, &v)) return false;
  *out = v != 0;
  return true;
}

bool FlexMap::as_string(const FlexValue& value, const char** out) const {
  if (value.type != FlexType::kString && value.type != FlexType::kKey) return false;
  const uint8_t* p = nullptr;
  if (!indirect(value.slot, value.slot_width, &p)) return false;
  if (value.type == FlexType::kString) {
    uint64_t length = 0;
    if (p - begin_ < value.target_width) return false;
    if (!read_uint(p - value.target_width, value.target_width, &length)) return false;
    if (!in_bounds(p, length) || length >= static_cast<uint64_t>(end_ - p) || p[length] != 0) {
      return false;
    }
    *out = reinterpret_cast<const char*>(p);
    return true;
  }
  return c_string(p, out);
}

}  // namespace gruwb
