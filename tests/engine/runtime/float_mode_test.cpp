// Denormal flushing (engine/runtime/float_mode.h): the engine's invoke and
// training step compute with denormals as zero, and the caller's mode is the
// same afterwards.

#include "engine/runtime/float_mode.h"

#include <gtest/gtest.h>

#include "tests/engine/kernels/op_test_util.h"
#include "tests/engine/train/gradient_check.h"

namespace gruwb::test {
namespace {

// Not constant-folded: the product is computed in the current mode.
float product(float a, float b) {
  volatile float x = a;
  volatile float y = b;
  return x * y;
}

FloatMode flush_bits() { return float_mode() & kFlushDenormalBits; }

TEST(FloatModeTest, BeginSetsAndEndRestores) {
  if (kFlushDenormalBits == 0) GTEST_SKIP() << "no flush-to-zero control on this target";
  ASSERT_EQ(flush_bits(), 0u) << "the test process must start without flushing";
  EXPECT_NE(product(1e-20f, 1e-20f), 0.f);
  const FloatMode outer = flush_denormals_begin();
  EXPECT_EQ(flush_bits(), kFlushDenormalBits);
  EXPECT_EQ(product(1e-20f, 1e-20f), 0.f);
  const FloatMode inner = flush_denormals_begin();  // nested entry points
  flush_denormals_end(inner);
  EXPECT_EQ(flush_bits(), kFlushDenormalBits) << "the inner end must keep the outer's flushing";
  flush_denormals_end(outer);
  EXPECT_EQ(flush_bits(), 0u);
  EXPECT_NE(product(1e-20f, 1e-20f), 0.f);
}

OpModelBuilder multiply() {
  OpModelBuilder b;
  int x = b.input("x", {3});
  int y = b.input("y", {3});
  int z = b.output("z");
  b.op(BuiltinOperator::MUL, {x, y}, {z}, fb::MulOptionsT());
  return b;
}

TEST(FloatModeTest, InvokeFlushesDenormalsAndRestoresTheMode) {
  if (kFlushDenormalBits == 0) GTEST_SKIP() << "no flush-to-zero control on this target";
  const FloatMode before = float_mode();
  // A denormal operand (1e-40: DAZ) and a denormal result (1e-20 * 1e-20: FTZ) give 0.
  auto out = run(multiply(),
                 {Values::f32({3}, {1e-40f, 3.f, 1e-20f}), Values::f32({3}, {1.f, 2.f, 1e-20f})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].floats(), (std::vector<float>{0.f, 6.f, 0.f}));
  EXPECT_EQ(float_mode() & kFlushDenormalBits, before & kFlushDenormalBits);
  EXPECT_NE(product(1e-20f, 1e-20f), 0.f) << "the caller's mode was not restored";
}

TEST(FloatModeTest, TrainingStepFlushesDenormalsAndRestoresTheMode) {
  if (kFlushDenormalBits == 0) GTEST_SKIP() << "no flush-to-zero control on this target";
  Session s;
  ASSERT_TRUE(s.prepare(multiply(), mse_config()));
  Trainer& t = s.trainer;
  const float x[3] = {3.f, 1.f, 2.f};
  const float y[3] = {1e-40f, 1.f, 1.f};  // a denormal weight-like operand
  const float labels[3] = {1.f, 1.f, 2.f};
  memcpy(t.input(0)->data, x, sizeof x);
  memcpy(t.input(1)->data, y, sizeof y);
  memcpy(t.label(), labels, sizeof labels);
  const FloatMode before = float_mode();
  t.clear_gradients();
  ASSERT_TRUE(t.accumulate(nullptr).ok());
  EXPECT_EQ(float_mode() & kFlushDenormalBits, before & kFlushDenormalBits);
  // z0 = 3 * 1e-40 is 0 flushed; dL/dz0 = 2 (0 - 1) / 3, dL/dx0 = dL/dz0 * y0 is
  // denormal and flushed to 0, dL/dy0 = dL/dz0 * x0 = -2.
  const Tensor* dx = t.interpreter().gradient(0, t.input(0));
  const Tensor* dy = t.interpreter().gradient(0, t.input(1));
  ASSERT_TRUE(dx && dy);
  EXPECT_EQ(t.interpreter().output(0)->f32()[0], 0.f);
  EXPECT_EQ(dx->f32()[0], 0.f);
  EXPECT_FLOAT_EQ(dy->f32()[0], -2.f);
  EXPECT_NE(product(1e-20f, 1e-20f), 0.f) << "the caller's mode was not restored";
}

}  // namespace
}  // namespace gruwb::test
