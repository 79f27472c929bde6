// TRANSPOSE: the converter's [B,T,I] <-> [T,B,I], every permutation of a
// rank-3 tensor, ranks 1 to 6, int32 data, INT64 perm, bad perms.

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "tests/engine/kernels/op_test_util.h"
#include "tests/engine/train/gradient_check.h"

namespace gruwb::test {
namespace {

using Dims = std::vector<int32_t>;
using Floats = std::vector<float>;

// out[o] = in[sum_d idx_d * in_stride[perm[d]]] by walking the output in order.
Floats reference_transpose(const Floats& in, const Dims& shape, const Dims& perm) {
  const size_t rank = shape.size();
  std::vector<int64_t> in_stride(rank, 1);
  for (int d = static_cast<int>(rank) - 2; d >= 0; --d)
    in_stride[d] = in_stride[d + 1] * shape[d + 1];
  Dims out_shape(rank);
  for (size_t d = 0; d < rank; ++d) out_shape[d] = shape[static_cast<size_t>(perm[d])];
  Floats out;
  std::vector<int32_t> index(rank, 0);
  for (size_t n = 0; n < in.size(); ++n) {
    int64_t offset = 0;
    for (size_t d = 0; d < rank; ++d) offset += index[d] * in_stride[static_cast<size_t>(perm[d])];
    out.push_back(in[static_cast<size_t>(offset)]);
    for (int d = static_cast<int>(rank) - 1; d >= 0; --d) {
      if (++index[d] < out_shape[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

Values transpose(const Dims& shape, const Dims& perm, const Floats& data) {
  OpModelBuilder b;
  int x = b.input("x", shape);
  int p = b.constant_i32("perm", {static_cast<int32_t>(perm.size())}, perm);
  int y = b.output("y");
  b.op(BuiltinOperator::TRANSPOSE, {x, p}, {y});
  auto out = run(b, {Values::f32(shape, data)});
  return out.empty() ? Values{} : out[0];
}

TEST(TransposeTest, BatchTimeSwapAroundAWhileLoop) {
  // [B=2, T=3, I=2] -> [T, B, I]: out[t][b][i] = in[b][t][i].
  Floats in = iota_floats(12);
  Values y = transpose({2, 3, 2}, {1, 0, 2}, in);
  EXPECT_EQ(y.shape, (Dims{3, 2, 2}));
  EXPECT_EQ(y.floats(), (Floats{0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11}));
}

TEST(TransposeTest, EveryPermutationOfRankThree) {
  const Dims shape = {2, 3, 4};
  Floats in = iota_floats(24, 1.f, 0.5f);
  Dims perm = {0, 1, 2};
  do {
    Values y = transpose(shape, perm, in);
    EXPECT_EQ(y.shape, (Dims{shape[perm[0]], shape[perm[1]], shape[perm[2]]}));
    EXPECT_EQ(y.floats(), reference_transpose(in, shape, perm));
  } while (std::next_permutation(perm.begin(), perm.end()));
}

TEST(TransposeTest, RanksOneToSix) {
  const Dims full_shape = {2, 3, 1, 2, 2, 3};
  for (size_t rank = 1; rank <= 6; ++rank) {
    Dims shape(full_shape.begin(), full_shape.begin() + static_cast<long>(rank));
    int64_t n = 1;
    for (int32_t d : shape) n *= d;
    Dims perm(rank);
    std::iota(perm.rbegin(), perm.rend(), 0);  // full reversal
    if (rank > 2) std::swap(perm[0], perm[1]);
    Floats in = iota_floats(n);
    Values y = transpose(shape, perm, in);
    EXPECT_EQ(y.floats(), reference_transpose(in, shape, perm)) << "rank " << rank;
  }
}

TEST(TransposeTest, Int32DataWithInt64Perm) {
  OpModelBuilder b;
  int x = b.input("x", {2, 3}, TensorType::INT32);
  int p = b.constant_i64("perm", {2}, {1, 0});
  int y = b.output("y", {}, TensorType::INT32);
  b.op(BuiltinOperator::TRANSPOSE, {x, p}, {y});
  auto out = run(b, {Values::i32({2, 3}, {1, 2, 3, 4, 5, 6})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (Dims{3, 2}));
  EXPECT_EQ(out[0].ints(), (std::vector<int32_t>{1, 4, 2, 5, 3, 6}));
}

TEST(TransposeTest, RejectsBadPermutations) {
  for (const Dims& perm : {Dims{0, 0, 1}, Dims{0, 1, 3}, Dims{0, 1}}) {
    OpModelBuilder b;
    int x = b.input("x", {2, 3, 4});
    int p = b.constant_i32("perm", {static_cast<int32_t>(perm.size())}, perm);
    int y = b.output("y");
    b.op(BuiltinOperator::TRANSPOSE, {x, p}, {y});
    std::string error = prepare_error(b);
    EXPECT_NE(error.find("perm 'perm'"), std::string::npos) << error;
  }
  OpModelBuilder b;
  int x = b.input("x", {2, 3});
  int p = b.input("perm", {2}, TensorType::INT32);
  int y = b.output("y");
  b.op(BuiltinOperator::TRANSPOSE, {x, p}, {y});
  EXPECT_NE(prepare_error(b).find("perm 'perm' is computed at run time"), std::string::npos)
      << prepare_error(b);
}

// Training: finite-difference check of the backward (gradient_check.h).
TEST(TransposeBackward, MatchesFiniteDifferences) {
  OpModelBuilder b;
  int x = b.input("x", {2, 3, 4});
  int perm = b.constant_i32("perm", {3}, {2, 0, 1});
  int y = b.output("y");
  b.op(BuiltinOperator::TRANSPOSE, {x, perm}, {y});
  check_input_gradients(b, {random_floats(24, 1.f, 1)}, 24, "TRANSPOSE [2,0,1]");
}

}  // namespace
}  // namespace gruwb::test
