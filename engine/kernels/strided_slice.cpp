// STRIDED_SLICE with TensorFlow's semantics: begin/end/strides tensors
// (INT32 or INT64), begin/end masks, one ellipsis, new axes, shrunk axes,
// negative strides, and the `offset` flag (end counts from begin).
//
// begin may be computed at run time (the converter's x[t] on a loop
// counter) as long as the output shape does not depend on it: every
// dimension whose begin is needed must be shrunk; likewise for end. Strides
// must be constant.

#include "engine/kernels/data_util.h"

namespace gruwb {
namespace {

constexpr int32_t kMaxSliceSpecs = 16;

// The slice over the input's own dimensions, after expanding the ellipsis
// and dropping new axes (which only change the output shape).
struct SliceSpec {
  int32_t start[kMaxRank] = {};
  int32_t count[kMaxRank] = {};
  int32_t stride[kMaxRank] = {};
  Shape output;
};

struct IndexValues {
  const Tensor* tensor;
  bool known;
  int64_t at(int32_t i) const { return index_at(tensor, i); }
};

int64_t clamp(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : (v > hi ? hi : v); }

// Builds the spec; with known == false for begin or end (prepare with run-time
// values), fails when the output shape would depend on them.
Status build_spec(const OpContext& ctx, const IndexValues& begin, const IndexValues& end,
                  SliceSpec* spec) {
  const Tensor* input = ctx.input(0);
  const Tensor* strides = ctx.input(3);
  const auto* options = ctx.op().options<fb::StridedSliceOptions>();
  const uint32_t begin_mask = options ? static_cast<uint32_t>(options->begin_mask()) : 0;
  const uint32_t end_mask = options ? static_cast<uint32_t>(options->end_mask()) : 0;
  const uint32_t ellipsis_mask = options ? static_cast<uint32_t>(options->ellipsis_mask()) : 0;
  const uint32_t new_axis_mask = options ? static_cast<uint32_t>(options->new_axis_mask()) : 0;
  const uint32_t shrink_mask = options ? static_cast<uint32_t>(options->shrink_axis_mask()) : 0;
  const bool offset = options && options->offset();
  const int32_t specs = static_cast<int32_t>(begin.tensor->elements());
  const int32_t rank = input->shape.rank;

  // Specs that consume an input dimension; the ellipsis takes the rest. No
  // ellipsis means an implicit one after the last spec.
  int32_t ellipsis_at = specs;
  int32_t consuming = 0;
  for (int32_t i = 0; i < specs; ++i) {
    const uint32_t bit = 1u << i;
    if (ellipsis_mask & bit) {
      if (ellipsis_at != specs) {
        return Status::error(StatusCode::kInvalidModel, "ellipsis_mask 0x%x has more than one bit",
                             static_cast<unsigned>(ellipsis_mask));
      }
      ellipsis_at = i;
    } else if (!(new_axis_mask & bit)) {
      ++consuming;
    }
  }
  if (consuming > rank) {
    return Status::error(StatusCode::kInvalidModel, "%d slice indices for input '%s' %s of rank %d",
                         static_cast<int>(consuming), input->name, ShapeText(input->shape).text,
                         static_cast<int>(rank));
  }
  const int32_t ellipsis_dims = rank - consuming;

  Shape& out = spec->output;
  out = Shape();
  int32_t d = 0;  // next input dimension
  auto push_output = [&](int32_t size) -> Status {
    if (out.rank == kMaxRank) {
      return Status::error(StatusCode::kUnsupported, "output rank exceeds %d", kMaxRank);
    }
    out.dims[out.rank++] = size;
    return Status();
  };
  for (int32_t i = 0; i <= specs; ++i) {
    const uint32_t bit = i < specs ? 1u << i : 0;
    if (i == ellipsis_at) {
      for (int32_t k = 0; k < ellipsis_dims; ++k, ++d) {
        spec->start[d] = 0;
        spec->stride[d] = 1;
        spec->count[d] = input->shape.dims[d];
        GRUWB_RETURN_IF_ERROR(push_output(input->shape.dims[d]));
      }
      continue;
    }
    if (i == specs) break;
    if (new_axis_mask & bit) {
      GRUWB_RETURN_IF_ERROR(push_output(1));
      continue;
    }
    const int64_t size = input->shape.dims[d];
    const int64_t stride = index_at(strides, i);
    if (stride == 0) {
      return Status::error(StatusCode::kInvalidModel, "stride %d in '%s' is 0", static_cast<int>(i),
                           strides->name);
    }
    spec->stride[d] = static_cast<int32_t>(stride);
    if (shrink_mask & bit) {
      // x[b]: one element; the end value does not matter.
      spec->count[d] = 1;
      if (!begin.known) {
        spec->start[d] = 0;
        ++d;
        continue;
      }
      int64_t b = begin.at(i);
      if (b < 0) b += size;
      if (b < 0 || b >= size) {
        return Status::error(StatusCode::kInvalidArgument,
                             "index %lld in '%s' is out of range for dimension %d of '%s' %s",
                             static_cast<long long>(begin.at(i)), begin.tensor->name,
                             static_cast<int>(d), input->name, ShapeText(input->shape).text);
      }
      spec->start[d] = static_cast<int32_t>(b);
      ++d;
      continue;
    }
    const bool forward = stride > 0;
    const int64_t lo = forward ? 0 : -1;
    const int64_t hi = forward ? size : size - 1;
    int64_t start = 0;
    if (begin_mask & bit) {
      start = forward ? 0 : size - 1;
    } else if (!begin.known) {
      return Status::error(StatusCode::kUnsupported,
                           "begin '%s' is computed at run time, but the size of dimension %d "
                           "depends on it (only shrunk or fully masked dimensions may)",
                           begin.tensor->name, static_cast<int>(d));
    } else {
      start = begin.at(i);
      start = clamp(start < 0 ? start + size : start, lo, hi);
    }
    int64_t stop = 0;
    if (end_mask & bit) {
      stop = forward ? size : -1;
    } else if (!end.known) {
      return Status::error(StatusCode::kUnsupported,
                           "end '%s' is computed at run time, but the size of dimension %d "
                           "depends on it (only shrunk or fully masked dimensions may)",
                           end.tensor->name, static_cast<int>(d));
    } else {
      stop = end.at(i);
      if (offset) stop += start;
      stop = clamp(stop < 0 ? stop + size : stop, lo, hi);
    }
    int64_t count =
        forward ? (stop - start + stride - 1) / stride : (start - stop + (-stride) - 1) / (-stride);
    if (count < 0) count = 0;
    spec->start[d] = static_cast<int32_t>(start);
    spec->count[d] = static_cast<int32_t>(count);
    GRUWB_RETURN_IF_ERROR(push_output(static_cast<int32_t>(count)));
    ++d;
  }
  return Status();
}

Status check_index_vector(const Tensor* tensor, const char* role, int32_t specs) {
  GRUWB_RETURN_IF_ERROR(expect_index_type(tensor, role));
  if (tensor->shape.rank != 1 || tensor->shape.dims[0] != specs) {
    return Status::error(StatusCode::kInvalidModel, "%s '%s' has shape %s, expected [%d]", role,
                         tensor->name, ShapeText(tensor->shape).text, static_cast<int>(specs));
  }
  return Status();
}

Status prepare(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 4, 4));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const Tensor* input = ctx.input(0);
  const Tensor* begin = ctx.input(1);
  const Tensor* end = ctx.input(2);
  const Tensor* strides = ctx.input(3);
  size_t element_bytes = 0;
  GRUWB_RETURN_IF_ERROR(element_size(input, "input", &element_bytes));
  GRUWB_RETURN_IF_ERROR(expect_index_type(begin, "begin"));
  if (begin->shape.rank != 1 || begin->shape.dims[0] > kMaxSliceSpecs) {
    return Status::error(
        StatusCode::kInvalidModel, "begin '%s' has shape %s, expected 1-D with at most %d values",
        begin->name, ShapeText(begin->shape).text, static_cast<int>(kMaxSliceSpecs));
  }
  const int32_t specs = begin->shape.dims[0];
  GRUWB_RETURN_IF_ERROR(check_index_vector(end, "end", specs));
  GRUWB_RETURN_IF_ERROR(check_index_vector(strides, "strides", specs));
  if (!is_constant(strides)) {
    return Status::error(StatusCode::kUnsupported,
                         "strides '%s' are computed at run time; they must be constant",
                         strides->name);
  }
  SliceSpec spec;
  GRUWB_RETURN_IF_ERROR(
      build_spec(ctx, {begin, is_constant(begin)}, {end, is_constant(end)}, &spec));
  Tensor* output = ctx.output(0);
  output->type = input->type;
  set_output_shape(output, spec.output);
  return Status();
}

// The input elements the output takes: base + sum(i_d * step_d), with
// count[d] per input dimension (new axes and shrunk axes add no loop).
Status walk(const OpContext& ctx, SliceSpec* spec, int64_t* base, int64_t* step) {
  const Tensor* input = ctx.input(0);
  GRUWB_RETURN_IF_ERROR(build_spec(ctx, {ctx.input(1), true}, {ctx.input(2), true}, spec));
  *base = 0;
  int64_t in_stride = 1;
  for (int32_t d = input->shape.rank - 1; d >= 0; --d) {
    *base += spec->start[d] * in_stride;
    step[d] = spec->stride[d] * in_stride;
    in_stride *= input->shape.dims[d];
  }
  return Status();
}

Status eval(OpContext& ctx) {
  const Tensor* input = ctx.input(0);
  SliceSpec spec;
  int64_t step[kMaxRank];
  int64_t base = 0;
  GRUWB_RETURN_IF_ERROR(walk(ctx, &spec, &base, step));
  strided_copy(input->data, ctx.output(0)->data, element_bytes_of(input->type), base, spec.count,
               step, input->shape.rank);
  return Status();
}

// Every mask only changes which elements are taken and the output's shape;
// the element order is the walk's, so the gradient goes back the same way.
Status backward(OpContext& ctx) {
  const Tensor* dy = ctx.gradient(ctx.output(0));
  Tensor* dx = ctx.gradient(ctx.input(0));
  if (!dy || !dx) return Status();
  SliceSpec spec;
  int64_t step[kMaxRank];
  int64_t base = 0;
  GRUWB_RETURN_IF_ERROR(walk(ctx, &spec, &base, step));
  strided_add_back(dy->f32(), dx->f32(), base, spec.count, step, ctx.input(0)->shape.rank);
  return Status();
}

}  // namespace

extern const KernelRegistration kStridedSliceKernel = {
    static_cast<int32_t>(BuiltinOperator::STRIDED_SLICE),
    nullptr,
    prepare_then_fold<prepare, eval>,
    eval,
    GRUWB_BACKWARD(backward),
    /*cost=*/nullptr,
    /*weight_inputs=*/0,
    /*dynamic_inputs=*/false,
    /*integer_activations=*/true};

}  // namespace gruwb
