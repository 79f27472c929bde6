// Ops that only change the shape: RESHAPE, EXPAND_DIMS, SQUEEZE. The data is
// copied unchanged (the planner never aliases an op's input and output).

#include <cstring>

#include "engine/kernels/data_util.h"
#include "engine/kernels/kernel_util.h"

namespace gruwb {
namespace {

// Reads a constant or computed int32 tensor of dims (empty if absent).
Status read_int_list(const Tensor* tensor, const int32_t** values, int32_t* count) {
  *values = nullptr;
  *count = 0;
  if (!tensor) return Status();
  if (tensor->type != TensorType::INT32) {
    return Status::error(StatusCode::kUnsupported, "shape tensor '%s' is %s, expected INT32",
                         tensor->name, tensor_type_name(tensor->type));
  }
  if (tensor->kind != TensorKind::kConstant) {
    return Status::error(StatusCode::kUnsupported,
                         "shape tensor '%s' is computed at run time; only constant shapes are "
                         "supported",
                         tensor->name);
  }
  *values = tensor->i32();
  *count = static_cast<int32_t>(tensor->elements());
  return Status();
}

Status resolve_shape(const Tensor* input, const int32_t* dims, int32_t rank, Shape* out) {
  if (rank > kMaxRank) {
    return Status::error(StatusCode::kUnsupported, "rank %d exceeds %d", static_cast<int>(rank),
                         kMaxRank);
  }
  Shape shape;
  shape.rank = rank;
  int64_t known = 1;
  int32_t unknown = -1;
  for (int32_t i = 0; i < rank; ++i) {
    shape.dims[i] = dims[i];
    if (dims[i] == -1) {
      if (unknown >= 0) return Status::error(StatusCode::kInvalidModel, "two -1 dimensions");
      unknown = i;
    } else if (dims[i] < 0) {
      return Status::error(StatusCode::kInvalidModel,
                           "new shape dimension %d is %d (must be >= 0, or -1 for the one "
                           "inferred dimension)",
                           static_cast<int>(i), static_cast<int>(dims[i]));
    } else if (!checked_mul(known, int64_t{dims[i]}, &known) ||
               known > static_cast<int64_t>(kMaxTensorElements)) {
      return Status::error(StatusCode::kInvalidModel,
                           "new shape for '%s' has more than %llu elements", input->name,
                           static_cast<unsigned long long>(kMaxTensorElements));
    }
  }
  if (unknown >= 0)
    shape.dims[unknown] = known ? static_cast<int32_t>(input->elements() / known) : 0;
  if (shape.elements() != input->elements()) {
    char from[48], to[48];
    format_shape(input->shape, from, sizeof from);
    format_shape(shape, to, sizeof to);
    return Status::error(StatusCode::kInvalidModel, "cannot reshape '%s' %s to %s", input->name,
                         from, to);
  }
  *out = shape;
  return Status();
}

Status reshape_shape(OpContext& ctx, Shape* out) {
  const Tensor* input = ctx.input(0);
  const int32_t* dims = nullptr;
  int32_t rank = 0;
  GRUWB_RETURN_IF_ERROR(read_int_list(ctx.input(1), &dims, &rank));
  // A 1-D shape tensor holding [] or no tensor: fall back to the options.
  const auto* options = ctx.op().options<fb::ReshapeOptions>();
  if (!dims && options && options->new_shape()) {
    dims = options->new_shape()->data();
    rank = static_cast<int32_t>(options->new_shape()->size());
  }
  if (!dims) {
    const Tensor* output = ctx.output(0);  // last resort: the file's output shape
    dims = output->shape.dims;
    rank = output->shape.rank;
  }
  return resolve_shape(input, dims, rank, out);
}

Status expand_dims_shape(OpContext& ctx, Shape* out) {
  const Tensor* input = ctx.input(0);
  const int32_t* axis_value = nullptr;
  int32_t count = 0;
  GRUWB_RETURN_IF_ERROR(read_int_list(ctx.input(1), &axis_value, &count));
  if (count != 1) return Status::error(StatusCode::kInvalidModel, "axis must be one value");
  int32_t axis = axis_value[0] < 0 ? axis_value[0] + input->shape.rank + 1 : axis_value[0];
  if (axis < 0 || axis > input->shape.rank || input->shape.rank >= kMaxRank) {
    return Status::error(StatusCode::kInvalidModel, "axis %d out of range for rank %d",
                         static_cast<int>(axis_value[0]), static_cast<int>(input->shape.rank));
  }
  out->rank = input->shape.rank + 1;
  for (int32_t i = 0, j = 0; i < out->rank; ++i)
    out->dims[i] = i == axis ? 1 : input->shape.dims[j++];
  return Status();
}

Status squeeze_shape(OpContext& ctx, Shape* out) {
  const Tensor* input = ctx.input(0);
  const auto* options = ctx.op().options<fb::SqueezeOptions>();
  bool squeeze[kMaxRank] = {};
  if (options && options->squeeze_dims() && options->squeeze_dims()->size() > 0) {
    for (int32_t d : *options->squeeze_dims()) {
      int32_t axis = d < 0 ? d + input->shape.rank : d;
      if (axis < 0 || axis >= input->shape.rank || input->shape.dims[axis] != 1) {
        return Status::error(StatusCode::kInvalidModel, "cannot squeeze dimension %d",
                             static_cast<int>(d));
      }
      squeeze[axis] = true;
    }
  } else {
    for (int32_t i = 0; i < input->shape.rank; ++i) squeeze[i] = input->shape.dims[i] == 1;
  }
  *out = Shape();
  for (int32_t i = 0; i < input->shape.rank; ++i) {
    if (!squeeze[i]) out->dims[out->rank++] = input->shape.dims[i];
  }
  return Status();
}

using ShapeFn = Status (*)(OpContext&, Shape*);

// The output shape from the input's; a run-time-shaped input gives a
// run-time-shaped output, recomputed in eval.
template <int kMinInputs, int kMaxInputs, ShapeFn Compute>
Status prepare(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, kMinInputs, kMaxInputs));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  Shape shape;
  GRUWB_RETURN_IF_ERROR(Compute(ctx, &shape));
  Tensor* output = ctx.output(0);
  output->type = ctx.input(0)->type;
  output->dynamic = ctx.input(0)->dynamic;
  set_output_shape(output, shape);
  return Status();
}

template <ShapeFn Compute>
Status eval(OpContext& ctx) {
  const Tensor* input = ctx.input(0);
  Tensor* output = ctx.output(0);
  if (output->dynamic) {
    Shape shape;
    GRUWB_RETURN_IF_ERROR(Compute(ctx, &shape));
    GRUWB_RETURN_IF_ERROR(set_dynamic_shape(output, shape));
  }
  size_t bytes = output->bytes;
  if (output->dynamic && !tensor_bytes(output->type, output->shape, &bytes)) bytes = 0;
  if (output->data != input->data) memcpy(output->data, input->data, bytes);
  return Status();
}

// Same elements in the same order: the gradient passes through unchanged.
Status backward(OpContext& ctx) {
  const Tensor* dy = ctx.gradient(ctx.output(0));
  Tensor* dx = ctx.gradient(ctx.input(0));
  if (!dy || !dx) return Status();
  add_floats(dx->f32(), dy->f32(), ctx.input(0)->elements());  // the actual count
  return Status();
}

}  // namespace

// Integer results fold at prepare (shape arithmetic such as RESHAPE of a
// SHAPE slice before a FILL's dims).
extern const KernelRegistration kReshapeKernel = {
    static_cast<int32_t>(BuiltinOperator::RESHAPE),
    nullptr,
    prepare_then_fold<prepare<1, 2, reshape_shape>, eval<reshape_shape>>,
    eval<reshape_shape>,
    GRUWB_BACKWARD(backward),
    /*cost=*/nullptr,
    /*weight_inputs=*/0,
    /*dynamic_inputs=*/true,
    /*integer_activations=*/true};
extern const KernelRegistration kExpandDimsKernel = {
    static_cast<int32_t>(BuiltinOperator::EXPAND_DIMS),
    nullptr,
    prepare_then_fold<prepare<2, 2, expand_dims_shape>, eval<expand_dims_shape>>,
    eval<expand_dims_shape>,
    GRUWB_BACKWARD(backward),
    /*cost=*/nullptr,
    /*weight_inputs=*/0,
    /*dynamic_inputs=*/true,
    /*integer_activations=*/true};
extern const KernelRegistration kSqueezeKernel = {
    static_cast<int32_t>(BuiltinOperator::SQUEEZE),
    nullptr,
    prepare_then_fold<prepare<1, 1, squeeze_shape>, eval<squeeze_shape>>,
    eval<squeeze_shape>,
    GRUWB_BACKWARD(backward),
    /*cost=*/nullptr,
    /*weight_inputs=*/0,
    /*dynamic_inputs=*/true,
    /*integer_activations=*/true};

}  // namespace gruwb
