#include "engine/kernels/kernel_util.h"

namespace gruwb {

Status check_activation(Activation activation) {
  switch (activation) {
    case Activation::NONE:
    case Activation::RELU:
    case Activation::RELU6:
    case Activation::RELU_N1_TO_1:
    case Activation::TANH: return Status();
    default:
      return Status::error(StatusCode::kUnsupported, "fused activation %s is not supported",
                           fb::EnumNameActivationFunctionType(activation));
  }
}

Status broadcast_shapes(const Shape& a, const Shape& b, Shape* out) {
  Shape result;
  result.rank = a.rank > b.rank ? a.rank : b.rank;
  for (int32_t d = 0; d < result.rank; ++d) {
    int32_t ad = d - (result.rank - a.rank);
    int32_t bd = d - (result.rank - b.rank);
    int32_t a_dim = ad >= 0 ? a.dims[ad] : 1;
    int32_t b_dim = bd >= 0 ? b.dims[bd] : 1;
    if (a_dim != b_dim && a_dim != 1 && b_dim != 1) {
      char as[48], bs[48];
      format_shape(a, as, sizeof as);
      format_shape(b, bs, sizeof bs);
      return Status::error(StatusCode::kInvalidModel, "shapes %s and %s cannot be broadcast", as,
                           bs);
    }
    result.dims[d] = a_dim == 1 ? b_dim : a_dim;
  }
  *out = result;
  return Status();
}

Status CustomOption::read_bool(bool* out) const {
  if (map.as_bool(value, out)) return Status();
  return Status::error(StatusCode::kInvalidModel, "%s option '%s' must be a bool", op_name, key);
}

Status CustomOption::read_string(const char** out) const {
  if (map.as_string(value, out)) return Status();
  return Status::error(StatusCode::kInvalidModel, "%s option '%s' must be a string", op_name, key);
}

Status CustomOption::unknown() const {
  return Status::error(StatusCode::kUnsupported, "%s option '%s' is unknown", op_name, key);
}

Status parse_custom_options(Span<uint8_t> bytes, const char* op_name, FlexMap* map) {
  if (bytes.empty() || map->parse(bytes.data, bytes.size)) return Status();
  return Status::error(StatusCode::kInvalidModel,
                       "%s custom options (%u bytes) are not a FlexBuffer map", op_name,
                       static_cast<unsigned>(bytes.size));
}

Status custom_option_at(const FlexMap& map, size_t i, const char* op_name, FlexValue* value,
                        const char** key) {
  *key = map.key(i);
  if (*key && map.value_at(i, value)) return Status();
  return Status::error(StatusCode::kInvalidModel, "%s custom options: entry %u is malformed",
                       op_name, static_cast<unsigned>(i));
}

}  // namespace gruwb
