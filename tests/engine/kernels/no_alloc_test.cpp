// Interpreter::invoke() allocates nothing: every operator new/delete and
// malloc-family call of this process is counted while invoke() runs, on real
// models with WHILE loops and on a built model with many data-movement ops.
// The replacements below are process-wide, hence this test's own executable.

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

#include "engine/tools/gru_quantization.h"
#include "engine/tools/model_builder.h"
#include "engine/tools/model_file.h"
#include "engine/tools/model_runner.h"
#include "tests/engine/kernels/op_test_util.h"
#include "tests/engine/test_models.h"

namespace {

std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};

void note_allocation() {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1);
}

}  // namespace

#if defined(__SANITIZE_ADDRESS__)
// Under ASan the allocator is the sanitizer's, which cannot be replaced; its hooks see every
// malloc-family call and operator new instead.
extern "C" int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void*,
                                                                             size_t),
                                                         void (*free_hook)(const volatile void*));
namespace {
[[maybe_unused]] const int kHooksInstalled = __sanitizer_install_malloc_and_free_hooks(
    [](const volatile void*, size_t) { note_allocation(); }, [](const volatile void*) {});
}  // namespace
#else
// glibc's own allocator entry points, so the wrappers need no allocator of
// their own.
extern "C" {
void* __libc_malloc(size_t size);
void* __libc_calloc(size_t count, size_t size);
void* __libc_realloc(void* pointer, size_t size);
void* __libc_memalign(size_t alignment, size_t size);
void __libc_free(void* pointer);
}

namespace {

void* allocate(size_t size) {
  note_allocation();
  void* p = __libc_malloc(size ? size : 1);
  if (!p) throw std::bad_alloc();
  return p;
}

void* allocate_aligned(size_t size, std::align_val_t alignment) {
  note_allocation();
  void* p = __libc_memalign(static_cast<size_t>(alignment), size ? size : 1);
  if (!p) throw std::bad_alloc();
  return p;
}

}  // namespace

extern "C" {
void* malloc(size_t size) {
  note_allocation();
  return __libc_malloc(size);
}
void* calloc(size_t count, size_t size) {
  note_allocation();
  return __libc_calloc(count, size);
}
void* realloc(void* pointer, size_t size) {
  note_allocation();
  return __libc_realloc(pointer, size);
}
void* aligned_alloc(size_t alignment, size_t size) {
  note_allocation();
  return __libc_memalign(alignment, size);
}
int posix_memalign(void** out, size_t alignment, size_t size) {
  note_allocation();
  *out = __libc_memalign(alignment, size);
  return *out ? 0 : 12;  // ENOMEM
}
void free(void* pointer) { __libc_free(pointer); }
}

void* operator new(size_t size) { return allocate(size); }
void* operator new[](size_t size) { return allocate(size); }
void* operator new(size_t size, const std::nothrow_t&) noexcept {
  note_allocation();
  return __libc_malloc(size ? size : 1);
}
void* operator new[](size_t size, const std::nothrow_t&) noexcept {
  note_allocation();
  return __libc_malloc(size ? size : 1);
}
void* operator new(size_t size, std::align_val_t alignment) {
  return allocate_aligned(size, alignment);
}
void* operator new[](size_t size, std::align_val_t alignment) {
  return allocate_aligned(size, alignment);
}
void operator delete(void* pointer) noexcept { __libc_free(pointer); }
void operator delete[](void* pointer) noexcept { __libc_free(pointer); }
void operator delete(void* pointer, size_t) noexcept { __libc_free(pointer); }
void operator delete[](void* pointer, size_t) noexcept { __libc_free(pointer); }
void operator delete(void* pointer, std::align_val_t) noexcept { __libc_free(pointer); }
void operator delete[](void* pointer, std::align_val_t) noexcept { __libc_free(pointer); }
void operator delete(void* pointer, size_t, std::align_val_t) noexcept { __libc_free(pointer); }
void operator delete[](void* pointer, size_t, std::align_val_t) noexcept { __libc_free(pointer); }

#endif  // __SANITIZE_ADDRESS__

namespace gruwb::test {
namespace {

// Allocations made by `f`.
template <typename F>
long count_allocations(F f) {
  g_allocations = 0;
  g_counting = true;
  f();
  g_counting = false;
  return g_allocations.load();
}

TEST(NoAllocTest, TheCounterSeesAllocations) {
  // Without this the test below could pass with a hook that counts nothing.
  long n = count_allocations([] {
    std::vector<int> v(100);
    void* volatile p = std::malloc(16);  // volatile: the pair must not be optimised away
    std::free(p);
    EXPECT_EQ(v.size(), 100u);
  });
  EXPECT_EQ(n, 2);
}

// Fills every input with `value` (float or int32), invokes a few times.
long invoke_allocations(tools::ModelRunner& runner, float value) {
  Interpreter& interpreter = runner.interpreter();
  for (int i = 0; i < interpreter.input_count(); ++i) {
    Tensor* input = interpreter.input(i);
    for (int64_t e = 0; e < input->elements(); ++e) {
      if (input->type == TensorType::FLOAT32) input->f32()[e] = value;
      if (input->type == TensorType::INT32) input->i32()[e] = static_cast<int32_t>(value);
    }
  }
  Status status;
  long n = count_allocations([&] {
    for (int k = 0; k < 3 && status.ok(); ++k) status = interpreter.invoke();
  });
  EXPECT_TRUE(status.ok()) << status.message();
  return n;
}

TEST(NoAllocTest, RealModelsWithLoopsAndRecurrentOps) {
  for (const char* file :
       {"litert_multi_subgraphs_while.tflite", "litert_nested_while.tflite",
        "tflm_hello_world_float.tflite", "litert_call_once_mul.tflite",
        "litert_unidirectional_sequence_lstm_24inputs.tflite", "tflm_mnist_fused_lstm_float.tflite",
        "one_onert_micro_unidir_lstm_float.circle", "gru_float.circle",
        "tflm_mnist_fused_lstm_int8.tflite"}) {
    SCOPED_TRACE(file);
    tools::LoadedModel loaded;
    std::string error;
    ASSERT_TRUE(tools::load_model_file(model_path(file), &loaded, &error)) << error;
    tools::ModelRunner runner;
    ASSERT_TRUE(runner.prepare(loaded.model, &error)) << error;
    EXPECT_EQ(invoke_allocations(runner, 1.f), 0);
  }
}

// Hybrid kernels quantize x and the states every step into scratch planned at prepare.
TEST(NoAllocTest, HybridRecurrentKernels) {
  for (const char* stem :
       {"hybrid_lstm_asymmetric", "hybrid_lstm_projection_asymmetric", "hybrid_rnn_symmetric"}) {
    SCOPED_TRACE(stem);
    tools::LoadedModel loaded;
    std::string error;
    ASSERT_TRUE(tools::load_model_file(
        std::string(GRUWB_SOURCE_DIR) + "/tests/fixtures/hybrid/" + stem + ".tflite", &loaded,
        &error))
        << error;
    tools::ModelRunner runner;
    ASSERT_TRUE(runner.prepare(loaded.model, &error)) << error;
    EXPECT_EQ(invoke_allocations(runner, 0.5f), 0);
  }
}

// The integer GRU keeps its state and gates in scratch planned at prepare.
TEST(NoAllocTest, IntegerGru) {
  tools::ModelDef def;
  std::string error;
  ASSERT_TRUE(tools::build_model(tools::BuildSpec(), &def, &error)) << error;
  tools::GruCalibration calibration;
  calibration.x_min = -1.f;
  calibration.x_max = 1.f;
  calibration.float_boundaries = true;
  ASSERT_TRUE(tools::quantize_gru_op(&def, 0, 0, calibration, &error)) << error;
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(tools::write_model(def, ModelFormat::kTflite, &bytes, &error)) << error;
  Model model;
  ASSERT_TRUE(Model::load(bytes.data(), bytes.size(), &model).ok());
  tools::ModelRunner runner;
  ASSERT_TRUE(runner.prepare(model, &error)) << error;
  EXPECT_EQ(invoke_allocations(runner, 0.5f), 0);
}

TEST(NoAllocTest, ManyKernelsInOneModel) {
  // x [2,3,4] -> TRANSPOSE -> GATHER(t) -> FC -> SPLIT -> CONCATENATION ->
  // STRIDED_SLICE -> SOFTMAX, plus SHAPE/PACK/FILL/CAST/SLICE/UNPACK/SPLIT_V.
  OpModelBuilder b;
  int x = b.input("x", {2, 3, 4});
  int t = b.input("t", {}, TensorType::INT32);
  int perm = b.constant_i32("perm", {3}, {1, 0, 2});
  int xt = b.tensor("xt");
  b.op(BuiltinOperator::TRANSPOSE, {x, perm}, {xt});
  int step = b.tensor("step");
  b.op(BuiltinOperator::GATHER, {xt, t}, {step}, fb::GatherOptionsT());
  int w = b.constant("w", {6, 4}, iota_floats(24, 0.1f));
  int h = b.tensor("h");
  b.op(BuiltinOperator::FULLY_CONNECTED, {step, w, -1}, {h}, fb::FullyConnectedOptionsT());
  int axis = b.constant_i32("axis", {}, {1});
  int h0 = b.tensor("h0"), h1 = b.tensor("h1");
  fb::SplitOptionsT split;
  split.num_splits = 2;
  b.op(BuiltinOperator::SPLIT, {axis, h}, {h0, h1}, split);
  int joined = b.tensor("joined");
  fb::ConcatenationOptionsT concat;
  concat.axis = 1;
  b.op(BuiltinOperator::CONCATENATION, {h1, h0}, {joined}, concat);
  int begin = b.constant_i32("begin", {2}, {0, 1});
  int end = b.constant_i32("end", {2}, {0, 5});
  int strides = b.constant_i32("strides", {2}, {1, 1});
  int sliced = b.tensor("sliced");
  fb::StridedSliceOptionsT ss;
  ss.begin_mask = 1;
  ss.end_mask = 1;
  b.op(BuiltinOperator::STRIDED_SLICE, {joined, begin, end, strides}, {sliced}, ss);
  int probabilities = b.output("probabilities");
  b.op(BuiltinOperator::SOFTMAX, {sliced}, {probabilities}, fb::SoftmaxOptionsT());
  int shape = b.tensor("shape", {}, TensorType::INT32);
  fb::ShapeOptionsT shape_options;
  shape_options.out_type = TensorType::INT32;
  b.op(BuiltinOperator::SHAPE, {probabilities}, {shape}, shape_options);
  int ones = b.constant("one", {}, {1.f});
  int filled = b.tensor("filled");
  b.op(BuiltinOperator::FILL, {shape, ones}, {filled});
  int as_int = b.output("as_int", {}, TensorType::INT32);
  b.op(BuiltinOperator::CAST, {filled}, {as_int});
  int slice_begin = b.input("slice_begin", {2}, TensorType::INT32);
  int slice_size = b.constant_i32("slice_size", {2}, {1, 2});
  int part = b.tensor("part");
  b.op(BuiltinOperator::SLICE, {probabilities, slice_begin, slice_size}, {part});
  int r0 = b.tensor("r0"), r1 = b.tensor("r1");
  fb::UnpackOptionsT unpack;
  unpack.num = 2;
  unpack.axis = 1;
  b.op(BuiltinOperator::UNPACK, {part}, {r0, r1}, unpack);
  int packed = b.tensor("packed");
  fb::PackOptionsT pack;
  pack.values_count = 2;
  b.op(BuiltinOperator::PACK, {r1, r0}, {packed}, pack);
  int sizes = b.constant_i32("sizes", {2}, {-1, 1});
  int axis0 = b.constant_i32("axis0", {}, {0});
  int v0 = b.output("v0"), v1 = b.output("v1");
  fb::SplitVOptionsT split_v;
  split_v.num_splits = 2;
  b.op(BuiltinOperator::SPLIT_V, {packed, sizes, axis0}, {v0, v1}, split_v);

  OpRunner runner(b);
  ASSERT_TRUE(runner.ok()) << runner.error();
  runner.set_input(0, Values::f32({2, 3, 4}, iota_floats(24, 0.05f)));
  runner.set_input(1, Values::i32({}, {2}));
  runner.set_input(2, Values::i32({2}, {1, 0}));
  bool ok = true;
  long n = count_allocations([&] {
    for (int k = 0; k < 3; ++k) ok = ok && runner.invoke();
  });
  EXPECT_TRUE(ok) << runner.error();
  EXPECT_EQ(n, 0);
  EXPECT_EQ(runner.output(2).shape, (std::vector<int32_t>{1, 1}));
  EXPECT_EQ(runner.output(1).ints(), std::vector<int32_t>(8, 1));  // FILL(1.0) cast
}

}  // namespace
}  // namespace gruwb::test
