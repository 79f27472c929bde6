// BATCH_MATMUL: a hand-computed 2x2 case, adj_x / adj_y, broadcast batch
// dimensions against an explicit reference, shape errors; backward for both
// operands (one a trainable constant) by finite differences.

#include <gtest/gtest.h>

#include "tests/engine/kernels/op_test_util.h"
#include "tests/engine/train/gradient_check.h"

namespace gruwb::test {
namespace {

using Dims = std::vector<int32_t>;
using Floats = std::vector<float>;

Values matmul(const Values& x, const Values& y, bool adj_x, bool adj_y) {
  OpModelBuilder m;
  int xi = m.input("x", x.shape);
  int yi = m.input("y", y.shape);
  int z = m.output("z");
  fb::BatchMatMulOptionsT options;
  options.adj_x = adj_x;
  options.adj_y = adj_y;
  m.op(BuiltinOperator::BATCH_MATMUL, {xi, yi}, {z}, options);
  auto out = run(m, {x, y});
  return out.empty() ? Values{} : out[0];
}

TEST(BatchMatmulTest, HandComputed) {
  // [[1,2],[3,4]] x [[5,6],[7,8]] = [[19,22],[43,50]]
  Values z =
      matmul(Values::f32({2, 2}, {1, 2, 3, 4}), Values::f32({2, 2}, {5, 6, 7, 8}), false, false);
  EXPECT_EQ(z.shape, (Dims{2, 2}));
  EXPECT_EQ(z.floats(), (Floats{19, 22, 43, 50}));
  // x^T y = [[1,3],[2,4]] x [[5,6],[7,8]] = [[26,30],[38,44]]
  z = matmul(Values::f32({2, 2}, {1, 2, 3, 4}), Values::f32({2, 2}, {5, 6, 7, 8}), true, false);
  EXPECT_EQ(z.floats(), (Floats{26, 30, 38, 44}));
  // x y^T = [[1,2],[3,4]] x [[5,7],[6,8]] = [[17,23],[39,53]]
  z = matmul(Values::f32({2, 2}, {1, 2, 3, 4}), Values::f32({2, 2}, {5, 6, 7, 8}), false, true);
  EXPECT_EQ(z.floats(), (Floats{17, 23, 39, 53}));
}

// Reference with explicit batch broadcasting for x [bx0, 1, M, K]-style shapes.
Floats reference(const Floats& x, const Dims& xs, const Floats& y, const Dims& ys, bool adj_x,
                 bool adj_y, Dims* out_shape) {
  // Pad batch dims to rank 2.
  auto batch = [](const Dims& s) {
    Dims b(s.begin(), s.end() - 2);
    while (b.size() < 2) b.insert(b.begin(), 1);
    return b;
  };
  Dims bx = batch(xs), by = batch(ys);
  const int xr = xs[xs.size() - 2], xc = xs[xs.size() - 1];
  const int yr = ys[ys.size() - 2], yc = ys[ys.size() - 1];
  const int M = adj_x ? xc : xr, K = adj_x ? xr : xc, N = adj_y ? yr : yc;
  Dims ob = {std::max(bx[0], by[0]), std::max(bx[1], by[1])};
  *out_shape = {};
  for (size_t d = 0; d < std::max(xs.size(), ys.size()) - 2; ++d) {
    out_shape->push_back(ob[2 - (std::max(xs.size(), ys.size()) - 2) + d]);
  }
  out_shape->push_back(M);
  out_shape->push_back(N);
  Floats z;
  for (int b0 = 0; b0 < ob[0]; ++b0) {
    for (int b1 = 0; b1 < ob[1]; ++b1) {
      const int xb = (bx[0] == 1 ? 0 : b0) * bx[1] + (bx[1] == 1 ? 0 : b1);
      const int yb = (by[0] == 1 ? 0 : b0) * by[1] + (by[1] == 1 ? 0 : b1);
      for (int i = 0; i < M; ++i) {
        for (int j = 0; j < N; ++j) {
          double s = 0;
          for (int p = 0; p < K; ++p) {
            const double a = x[xb * xr * xc + (adj_x ? p * xc + i : i * xc + p)];
            const double w = y[yb * yr * yc + (adj_y ? j * yc + p : p * yc + j)];
            s += a * w;
          }
          z.push_back(static_cast<float>(s));
        }
      }
    }
  }
  return z;
}

TEST(BatchMatmulTest, BroadcastBatchesAndAdjoints) {
  const std::pair<Dims, Dims> cases[] = {
      {{2, 1, 3, 4}, {3, 4, 2}},  // [2,1] x [3] batches -> [2,3]
      {{3, 2, 4}, {4, 5}},        // shared weights
      {{1, 2, 3}, {2, 3, 3}},
  };
  for (const auto& [xs, ys] : cases) {
    for (bool adj_x : {false, true}) {
      for (bool adj_y : {false, true}) {
        Dims xs2 = xs, ys2 = ys;
        if (adj_x) std::swap(xs2[xs2.size() - 1], xs2[xs2.size() - 2]);
        if (adj_y) std::swap(ys2[ys2.size() - 1], ys2[ys2.size() - 2]);
        int64_t nx = 1, ny = 1;
        for (int32_t d : xs2) nx *= d;
        for (int32_t d : ys2) ny *= d;
        Floats x = iota_floats(nx, 0.25f, -1.f), y = iota_floats(ny, -0.5f, 2.f);
        Dims shape;
        Floats expected = reference(x, xs2, y, ys2, adj_x, adj_y, &shape);
        Values z = matmul(Values::f32(xs2, x), Values::f32(ys2, y), adj_x, adj_y);
        EXPECT_EQ(z.shape, shape) << adj_x << adj_y;
        EXPECT_TRUE(floats_near(expected, z.floats(), 1e-4f)) << adj_x << adj_y;
      }
    }
  }
}

TEST(BatchMatmulTest, RejectsMismatchedInnerSizes) {
  OpModelBuilder m;
  int x = m.input("x", {2, 3});
  int y = m.input("y", {2, 3});
  int z = m.output("z");
  m.op(BuiltinOperator::BATCH_MATMUL, {x, y}, {z}, fb::BatchMatMulOptionsT());
  std::string error = prepare_error(m);
  EXPECT_NE(error.find("inner sizes 3 and 2 differ"), std::string::npos) << error;
}

TEST(BatchMatmulBackward, BothOperandsMatchFiniteDifferences) {
  for (bool adj_x : {false, true}) {
    for (bool adj_y : {false, true}) {
      OpModelBuilder b;
      int x = b.input("x", adj_x ? Dims{2, 3, 2} : Dims{2, 2, 3});
      int w = b.constant("w", adj_y ? Dims{4, 3} : Dims{3, 4}, random_floats(12, 1.f, 11));
      int z = b.output("z");
      fb::BatchMatMulOptionsT options;
      options.adj_x = adj_x;
      options.adj_y = adj_y;
      b.op(BuiltinOperator::BATCH_MATMUL, {x, w}, {z}, options);
      check_input_gradients(b, {random_floats(12, 1.f, 12)}, 16, "BATCH_MATMUL");
    }
  }
}

}  // namespace
}  // namespace gruwb::test
