// Op tables (engine/runtime/op_resolver.h): the full list names each kernel by
// the op it runs, the host's default table is the full one, and an interpreter
// given a smaller table (as a firmware built with GRUWB_FW_OPS gets) runs the
// models inside it and names every op outside it, once each.

#include "engine/runtime/op_resolver.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/runtime/interpreter.h"
#include "engine/tools/model_file.h"
#include "tests/engine/kernels/op_test_util.h"

namespace gruwb {

#define GRUWB_DECLARE_KERNEL(name, registration) extern const KernelRegistration registration;
GRUWB_ALL_KERNELS(GRUWB_DECLARE_KERNEL)
#undef GRUWB_DECLARE_KERNEL

namespace {

struct ListedKernel {
  const char* name;
  const KernelRegistration* registration;
};

std::vector<ListedKernel> listed_kernels() {
#define GRUWB_LISTED_KERNEL(name, registration) {#name, &registration},
  return {GRUWB_ALL_KERNELS(GRUWB_LISTED_KERNEL)};
#undef GRUWB_LISTED_KERNEL
}

// The reference gesture model's ops (GRUWB_FW_OPS=reference in .tflite form).
const KernelRegistration* const kReferenceKernels[] = {&kFullyConnectedKernel, &kSoftmaxKernel,
                                                       &kGruCustomKernel};
const OpResolver kReferenceOps = {kReferenceKernels, 3, "test: FULLY_CONNECTED,SOFTMAX,GRUWB_GRU"};

std::vector<uint8_t> sample_model(const char* file) {
  std::vector<uint8_t> bytes;
  std::string error;
  EXPECT_TRUE(tools::read_file_bytes(std::string(GRUWB_SOURCE_DIR) + "/resources/samples/" + file,
                                     &bytes, &error))
      << error;
  return bytes;
}

// prepare()'s status for `bytes` with `ops` (nullptr: the default table).
Status prepare_with(const std::vector<uint8_t>& bytes, const OpResolver* ops) {
  Model model;
  Status status = Model::load(bytes.data(), bytes.size(), &model);
  if (!status.ok()) return status;
  alignas(Interpreter::kAlignment) static uint8_t arena[1 << 20];
  Interpreter interpreter;
  interpreter.set_op_resolver(ops);
  return interpreter.prepare(model, arena, sizeof arena);
}

TEST(OpResolverTest, EveryListedNameIsTheOpItsKernelRuns) {
  const std::vector<ListedKernel> kernels = listed_kernels();
  ASSERT_EQ(static_cast<int>(kernels.size()), kAllOpCount);
  for (const ListedKernel& k : kernels) {
    const KernelRegistration& r = *k.registration;
    const char* runs = r.op_code == kOpCustom ? r.custom_code : op_code_name(r.op_code);
    ASSERT_NE(runs, nullptr) << k.name;
    EXPECT_STREQ(runs, k.name);
    EXPECT_EQ(all_ops().find(r.op_code, r.custom_code), &r) << k.name;
  }
  // One kernel per op: no name twice.
  for (size_t i = 0; i < kernels.size(); ++i)
    for (size_t j = i + 1; j < kernels.size(); ++j) EXPECT_STRNE(kernels[i].name, kernels[j].name);
}

TEST(OpResolverTest, HostDefaultTableHasEveryKernel) {
  EXPECT_EQ(default_op_resolver().count, kAllOpCount);
  EXPECT_TRUE(default_op_resolver().is_all());
  EXPECT_EQ(find_kernel(static_cast<int32_t>(BuiltinOperator::WHILE), nullptr), &kWhileKernel);
  EXPECT_EQ(find_kernel(kOpCustom, "GRUWB_GRU"), &kGruCustomKernel);
  EXPECT_EQ(find_kernel(kOpCustom, "NO_SUCH_OP"), nullptr);
  EXPECT_EQ(find_kernel(kOpCustom, nullptr), nullptr);
}

TEST(OpResolverTest, SmallTableFindsOnlyItsOps) {
  EXPECT_FALSE(kReferenceOps.is_all());
  EXPECT_EQ(kReferenceOps.find(static_cast<int32_t>(BuiltinOperator::FULLY_CONNECTED), nullptr),
            &kFullyConnectedKernel);
  EXPECT_EQ(kReferenceOps.find(kOpCustom, "GRUWB_GRU"), &kGruCustomKernel);
  EXPECT_EQ(kReferenceOps.find(static_cast<int32_t>(BuiltinOperator::LOGISTIC), nullptr), nullptr);
  // Circle's builtin GRU is another op than the custom GRUWB_GRU.
  EXPECT_EQ(kReferenceOps.find(static_cast<int32_t>(BuiltinOperator::GRU), nullptr), nullptr);
}

TEST(OpResolverTest, ReferenceModelPreparesWithItsThreeOps) {
  const Status status = prepare_with(sample_model("gesture_gru_fused.tflite"), &kReferenceOps);
  EXPECT_TRUE(status.ok()) << status.message();
}

TEST(OpResolverTest, ModelOutsideTheTableFailsNamingEachMissingOpOnce) {
  // The same network as a WHILE loop, as the TF converter writes it.
  const std::vector<uint8_t> bytes = sample_model("gesture_gru_while.tflite");
  const Status status = prepare_with(bytes, &kReferenceOps);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kUnsupported);
  const std::string message = status.message();
  EXPECT_EQ(message.find("this build's op table (test: FULLY_CONNECTED,SOFTMAX,GRUWB_GRU) has no "
                         "kernel for "),
            0u)
      << message;
  EXPECT_NE(message.find("WHILE"), std::string::npos) << message;
  EXPECT_NE(message.find("LOGISTIC"), std::string::npos) << message;
  EXPECT_EQ(message.find("LOGISTIC"), message.rfind("LOGISTIC")) << message;
  // The default table runs it.
  const Status full = prepare_with(bytes, nullptr);
  EXPECT_TRUE(full.ok()) << full.message();
}

TEST(OpResolverTest, OpWhoseNameEndsAnotherListedNameIsStillListed) {
  // GRUWB_GRU first, then Circle's GRU: "GRU" is inside "GRUWB_GRU" but is
  // another op, so both are named.
  test::OpModelBuilder b;
  const int x = b.input("x", {1, 2, 3});
  const int h = b.tensor("h");
  const int y = b.output("y");
  b.custom_op("GRUWB_GRU", {x}, {h}, {});
  b.op(BuiltinOperator::GRU, {h}, {y});
  const std::vector<uint8_t> bytes = b.bytes(ModelFormat::kCircle);
  const OpResolver nothing = {nullptr, 0, "none"};
  const Status status = prepare_with(bytes, &nothing);
  ASSERT_FALSE(status.ok());
  EXPECT_STREQ(status.message(),
               "this build's op table (none) has no kernel for 2 ops: GRUWB_GRU, GRU");
}

// A kernel from outside the library: y = 2 x, float32, any shape.
Status prepare_twice(OpContext& ctx) {
  GRUWB_RETURN_IF_ERROR(expect_inputs(ctx, 1, 1));
  GRUWB_RETURN_IF_ERROR(expect_outputs(ctx, 1));
  GRUWB_RETURN_IF_ERROR(expect_float(ctx.input(0), "input"));
  set_output_shape(ctx.output(0), ctx.input(0)->shape);
  return Status();
}
Status eval_twice(OpContext& ctx) {
  const Tensor* x = ctx.input(0);
  Tensor* y = ctx.output(0);
  for (int64_t i = 0; i < x->elements(); ++i) y->f32()[i] = 2.f * x->f32()[i];
  return Status();
}
const KernelRegistration kTwiceKernel = {kOpCustom, "USER_TWICE", prepare_twice, eval_twice};

TEST(OpResolverTest, UserKernelsJoinATableFromOutsideTheLibrary) {
  MutableOpResolver<2> ops("user");
  EXPECT_TRUE(ops.add(kTwiceKernel));
  EXPECT_FALSE(ops.add(kTwiceKernel)) << "one kernel per op";
  EXPECT_TRUE(ops.add(BuiltinOperator::FULLY_CONNECTED));
  EXPECT_FALSE(ops.add(BuiltinOperator::SOFTMAX)) << "the table is full";
  EXPECT_EQ(ops.count, 2);
  EXPECT_EQ(ops.find(kOpCustom, "USER_TWICE"), &kTwiceKernel);
  EXPECT_EQ(ops.find(static_cast<int32_t>(BuiltinOperator::FULLY_CONNECTED), nullptr),
            &kFullyConnectedKernel);
  EXPECT_TRUE(ops.supports(kOpCustom, "USER_TWICE"));
  EXPECT_FALSE(default_op_resolver().supports(kOpCustom, "USER_TWICE"));

  // x -> USER_TWICE -> FULLY_CONNECTED [1,2]: the interpreter runs both.
  test::OpModelBuilder b;
  const int x = b.input("x", {1, 2});
  const int doubled = b.tensor("doubled");
  const int w = b.constant("w", test::Values::f32({1, 2}, {1.f, 10.f}));
  const int y = b.output("y");
  b.custom_op("USER_TWICE", {x}, {doubled}, {});
  b.op(BuiltinOperator::FULLY_CONNECTED, {doubled, w, -1}, {y});
  const std::vector<uint8_t> bytes = b.bytes(ModelFormat::kTflite);
  Model model;
  ASSERT_TRUE(Model::load(bytes.data(), bytes.size(), &model).ok());
  alignas(Interpreter::kAlignment) static uint8_t arena[1 << 16];
  Interpreter interpreter;
  interpreter.set_op_resolver(&ops);
  const Status status = interpreter.prepare(model, arena, sizeof arena);
  ASSERT_TRUE(status.ok()) << status.message();
  interpreter.input(0)->f32()[0] = 3.f;
  interpreter.input(0)->f32()[1] = 4.f;
  ASSERT_TRUE(interpreter.invoke().ok());
  EXPECT_FLOAT_EQ(interpreter.output(0)->f32()[0], 2.f * 3.f + 10.f * 2.f * 4.f);
  // Without the user's table the op is named as missing.
  Interpreter plain;
  const Status missing = plain.prepare(model, arena, sizeof arena);
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(std::string(missing.message()).find("USER_TWICE"), std::string::npos);
}

// A kernel whose persistent request is not a multiple of the arena alignment (3 bytes), so the
// activations start after padding: a prepare that fails for want of room must count that
// padding in arena_bytes_needed(), or a caller retrying with it never gets there.
Status prepare_twice_with_odd_persistent(OpContext& ctx) {
  void* odd = nullptr;
  GRUWB_RETURN_IF_ERROR(ctx.allocate_persistent(3, &odd));
  return prepare_twice(ctx);
}
const KernelRegistration kOddPersistentKernel = {kOpCustom, "USER_TWICE",
                                                 prepare_twice_with_odd_persistent, eval_twice};

TEST(OpResolverTest, RetryingWithArenaBytesNeededSucceeds) {
  MutableOpResolver<1> ops("user");
  ASSERT_TRUE(ops.add(kOddPersistentKernel));
  test::OpModelBuilder b;
  const int x = b.input("x", {1, 64});
  const int y = b.output("y");
  b.custom_op("USER_TWICE", {x}, {y}, {});
  const std::vector<uint8_t> bytes = b.bytes(ModelFormat::kTflite);
  Model model;
  ASSERT_TRUE(Model::load(bytes.data(), bytes.size(), &model).ok());
  alignas(Interpreter::kAlignment) static uint8_t arena[1 << 16];
  Interpreter interpreter;
  interpreter.set_op_resolver(&ops);
  size_t size = 64;
  Status status = interpreter.prepare(model, arena, size);
  for (int attempt = 0; !status.ok() && attempt < 8; ++attempt) {
    ASSERT_EQ(status.code(), StatusCode::kOutOfMemory) << status.message();
    const size_t needed = interpreter.arena_bytes_needed();
    ASSERT_GT(needed, size) << "a failed prepare must ask for more than it had: "
                            << status.message();
    ASSERT_LE(needed, sizeof arena);
    size = needed;
    status = interpreter.prepare(model, arena, size);
  }
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(interpreter.arena_bytes_needed(), size);  // the last retry's size, exactly
}

}  // namespace
}  // namespace gruwb
