// BATCH_MATMUL(x, y): z[..., m, n] = sum_k x[..., m, k] y[..., k, n] with
// adj_x / adj_y transposing the last two dimensions of x / y and the batch
// dimensions broadcast (NumPy rules). Float32. Models whose weights live in
// resource variables multiply by them this way; the backward pass gives both
// operands their gradients (summed over broadcast batches).

#include "engine/kernels/data_util.h"
#include "engine/kernels/kernel_util.h"

namespace gruwb {
namespace {

struct MatmulShape {
  int32_t m = 0, k = 0, n = 0;
  bool adj_x = false, adj_y = false;
  Shape x_batch, y_batch, out_batch;
};

Shape batch_of(const Shape& shape) {
  Shape batch;
  batch.rank = shape.rank - 2;
  for (int32_t d = 0; d < batch.rank; ++d) batch.dims[d] = shape.dims[d];
  return batch;
}

MatmulShape matmul_shape(const OpContext& ctx) {
  const auto* options = ctx.op().options<fb::BatchMatMulOptions>();
  MatmulShape s;
  s.adj_x = options && options->adj_x();
  s.adj_y = options && options->adj_y();
  const Shape& x = ctx.input(0)->shape;
  const Shape& y = ctx.input(1)->shape;
  s.m = s.adj_x ? x.dim(-1) : x.dim(-2);
  s.k = s.adj_x ? x.dim(-2) : x.dim(-1);
  s.n = s.adj_y ? y.dim(-2) : y.dim(-1);
  s.x_batch = batch_of(x);
  s.y_batch = batch_of(y);
  return s;
}

Status prepare(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 2, 2));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  const Tensor* x = ctx.input(0);
  const Tensor* y = ctx.input(1);
  GRUWB_RETURN_IF_ERROR(expect_float(x, "x"));
  GRUWB_RETURN_IF_ERROR(expect_float(y, "y"));
  if (x->shape.rank < 2 || y->shape.rank < 2) {
    return Status::error(StatusCode::kInvalidModel, "x '%s' %s and y '%s' %s need rank 2 or more",
                         x->name, ShapeText(x->shape).text, y->name, ShapeText(y->shape).text);
  }
  MatmulShape s = matmul_shape(ctx);
  const int32_t y_k = s.adj_y ? y->shape.dim(-1) : y->shape.dim(-2);
  if (s.k != y_k) {
    return Status::error(StatusCode::kInvalidModel,
                         "x '%s' %s and y '%s' %s (adj_x %d, adj_y %d): inner sizes %d and %d "
                         "differ",
                         x->name, ShapeText(x->shape).text, y->name, ShapeText(y->shape).text,
                         s.adj_x, s.adj_y, static_cast<int>(s.k), static_cast<int>(y_k));
  }
  Shape batch;
  GRUWB_RETURN_IF_ERROR(broadcast_shapes(s.x_batch, s.y_batch, &batch));
  Shape shape = batch;
  shape.dims[shape.rank++] = s.m;
  shape.dims[shape.rank++] = s.n;
  Tensor* out = ctx.output(0);
  out->type = TensorType::FLOAT32;
  set_output_shape(out, shape);
  return Status();
}

// Element (r, c) of a [rows, cols] matrix stored transposed when `adj`.
inline int64_t at(bool adj, int32_t r, int32_t c, int32_t rows, int32_t cols) {
  return adj ? static_cast<int64_t>(c) * rows + r : static_cast<int64_t>(r) * cols + c;
}

Status eval(OpContext& ctx) {
  const Tensor* x = ctx.input(0);
  const Tensor* y = ctx.input(1);
  Tensor* out = ctx.output(0);
  const MatmulShape s = matmul_shape(ctx);
  const Shape out_batch = batch_of(out->shape);
  const int64_t x_size = static_cast<int64_t>(s.m) * s.k;
  const int64_t y_size = static_cast<int64_t>(s.k) * s.n;
  const int64_t z_size = static_cast<int64_t>(s.m) * s.n;
  for_each_broadcast(out_batch, s.x_batch, s.y_batch, [&](int64_t b, int64_t xb, int64_t yb) {
    const float* a = x->f32() + xb * x_size;
    const float* w = y->f32() + yb * y_size;
    float* z = out->f32() + b * z_size;
    for (int32_t i = 0; i < s.m; ++i) {
      for (int32_t j = 0; j < s.n; ++j) {
        float sum = 0.f;
        for (int32_t p = 0; p < s.k; ++p) {
          sum += a[at(s.adj_x, i, p, s.m, s.k)] * w[at(s.adj_y, p, j, s.k, s.n)];
        }
        z[static_cast<int64_t>(i) * s.n + j] = sum;
      }
    }
  });
  return Status();
}

// dx[m, k] += sum_n dz[m, n] y[k, n]; dy[k, n] += sum_m x[m, k] dz[m, n]
// (indices through the same adj layout as the forward).
Status backward(OpContext& ctx) {
  const Tensor* x = ctx.input(0);
  const Tensor* y = ctx.input(1);
  const Tensor* out = ctx.output(0);
  const Tensor* dz = ctx.gradient(out);
  Tensor* dx = ctx.gradient(x);
  Tensor* dy = ctx.gradient(y);
  if (!dz || (!dx && !dy)) return Status();
  const MatmulShape s = matmul_shape(ctx);
  const Shape out_batch = batch_of(out->shape);
  const int64_t x_size = static_cast<int64_t>(s.m) * s.k;
  const int64_t y_size = static_cast<int64_t>(s.k) * s.n;
  const int64_t z_size = static_cast<int64_t>(s.m) * s.n;
  for_each_broadcast(out_batch, s.x_batch, s.y_batch, [&](int64_t b, int64_t xb, int64_t yb) {
    const float* a = x->f32() + xb * x_size;
    const float* w = y->f32() + yb * y_size;
    const float* g = dz->f32() + b * z_size;
    float* ga = dx ? dx->f32() + xb * x_size : nullptr;
    float* gw = dy ? dy->f32() + yb * y_size : nullptr;
    for (int32_t i = 0; i < s.m; ++i) {
      for (int32_t j = 0; j < s.n; ++j) {
        const float gij = g[static_cast<int64_t>(i) * s.n + j];
        if (gij == 0.f) continue;
        for (int32_t p = 0; p < s.k; ++p) {
          const int64_t xa = at(s.adj_x, i, p, s.m, s.k);
          const int64_t ya = at(s.adj_y, p, j, s.k, s.n);
          if (ga) ga[xa] += gij * w[ya];
          if (gw) gw[ya] += gij * a[xa];
        }
      }
    }
  });
  return Status();
}

}  // namespace

extern const KernelRegistration kBatchMatmulKernel = {
    static_cast<int32_t>(BuiltinOperator::BATCH_MATMUL), nullptr, prepare, eval,
    GRUWB_BACKWARD(backward)};

}  // namespace gruwb
