// TRANSPOSE by a constant permutation (the converter's [B,T,I] <-> [T,B,I]
// around WHILE loops). Any byte-sized type, rank up to kMaxRank.

#include "engine/kernels/data_util.h"

namespace gruwb {
namespace {

Status prepare(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 2, 2));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const Tensor* input = ctx.input(0);
  const Tensor* perm = ctx.input(1);
  size_t element_bytes = 0;
  GRUWB_RETURN_IF_ERROR(element_size(input, "input", &element_bytes));
  GRUWB_RETURN_IF_ERROR(expect_constant_index(perm, "perm"));
  const int32_t rank = input->shape.rank;
  if (perm->shape.rank != 1 || perm->shape.dims[0] != rank) {
    return Status::error(StatusCode::kInvalidModel,
                         "perm '%s' has shape %s, expected [%d] for '%s' %s", perm->name,
                         ShapeText(perm->shape).text, static_cast<int>(rank), input->name,
                         ShapeText(input->shape).text);
  }
  bool seen[kMaxRank] = {};
  Shape shape;
  shape.rank = rank;
  for (int32_t d = 0; d < rank; ++d) {
    int64_t from = index_at(perm, d);
    if (from < 0 || from >= rank || seen[from]) {
      return Status::error(StatusCode::kInvalidModel,
                           "perm '%s' is not a permutation of 0..%d (value %lld at %d)", perm->name,
                           static_cast<int>(rank - 1), static_cast<long long>(from),
                           static_cast<int>(d));
    }
    seen[from] = true;
    shape.dims[d] = input->shape.dims[from];
  }
  Tensor* output = ctx.output(0);
  output->type = input->type;
  set_output_shape(output, shape);
  return Status();
}

// Output dimension d walks input dimension perm[d].
void walk(const OpContext& ctx, int32_t* count, int64_t* step) {
  const Tensor* input = ctx.input(0);
  const Tensor* perm = ctx.input(1);
  const int32_t rank = input->shape.rank;
  int64_t in_stride[kMaxRank];
  int64_t stride = 1;
  for (int32_t d = rank - 1; d >= 0; --d) {
    in_stride[d] = stride;
    stride *= input->shape.dims[d];
  }
  for (int32_t d = 0; d < rank; ++d) {
    const int64_t from = index_at(perm, d);
    count[d] = input->shape.dims[from];
    step[d] = in_stride[from];
  }
}

Status eval(OpContext& ctx) {
  const Tensor* input = ctx.input(0);
  int32_t count[kMaxRank];
  int64_t step[kMaxRank];
  walk(ctx, count, step);
  strided_copy(input->data, ctx.output(0)->data, element_bytes_of(input->type), 0, count, step,
               input->shape.rank);
  return Status();
}

// Each output element came from one input element: send its gradient back.
Status backward(OpContext& ctx) {
  const Tensor* dy = ctx.gradient(ctx.output(0));
  Tensor* dx = ctx.gradient(ctx.input(0));
  if (!dy || !dx) return Status();
  int32_t count[kMaxRank];
  int64_t step[kMaxRank];
  walk(ctx, count, step);
  strided_add_back(dy->f32(), dx->f32(), 0, count, step, ctx.input(0)->shape.rank);
  return Status();
}

}  // namespace

extern const KernelRegistration kTransposeKernel = {
    static_cast<int32_t>(BuiltinOperator::TRANSPOSE),
    nullptr,
    prepare_then_fold<prepare, eval>,
    eval,
    GRUWB_BACKWARD(backward),
    /*cost=*/nullptr,
    /*weight_inputs=*/0,
    /*dynamic_inputs=*/false,
    /*integer_activations=*/true};

}  // namespace gruwb
