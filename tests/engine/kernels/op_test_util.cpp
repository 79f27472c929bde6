#include "tests/engine/kernels/op_test_util.h"

#include <cmath>
#include <cstring>
#include <sstream>

namespace gruwb::test {
namespace {

template <typename T>
std::vector<uint8_t> raw_bytes(const std::vector<T>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

template <typename T>
std::vector<T> typed(const Values& v, TensorType want) {
  EXPECT_EQ(v.type, want) << "values are " << tensor_type_name(v.type) << ", read as "
                          << tensor_type_name(want);
  std::vector<T> out(v.bytes.size() / sizeof(T));
  if (v.type == want && !out.empty()) std::memcpy(out.data(), v.bytes.data(), v.bytes.size());
  if (v.type != want) out.clear();
  return out;
}

std::string status_text(const Status& status) {
  return std::string(status_code_name(status.code())) + ": " + status.message();
}

}  // namespace

// ---- Values -----------------------------------------------------------------

Values Values::f32(std::vector<int32_t> shape, const std::vector<float>& values) {
  return Values{TensorType::FLOAT32, std::move(shape), raw_bytes(values)};
}
Values Values::i32(std::vector<int32_t> shape, const std::vector<int32_t>& values) {
  return Values{TensorType::INT32, std::move(shape), raw_bytes(values)};
}
Values Values::i64(std::vector<int32_t> shape, const std::vector<int64_t>& values) {
  return Values{TensorType::INT64, std::move(shape), raw_bytes(values)};
}
Values Values::boolean(std::vector<int32_t> shape, const std::vector<bool>& values) {
  std::vector<uint8_t> bytes;
  for (bool b : values) bytes.push_back(b ? 1 : 0);
  return Values{TensorType::BOOL, std::move(shape), bytes};
}
Values Values::i8(std::vector<int32_t> shape, const std::vector<int8_t>& values) {
  return Values{TensorType::INT8, std::move(shape), raw_bytes(values)};
}

int64_t Values::elements() const {
  int64_t n = 1;
  for (int32_t d : shape) n *= d;
  return n;
}

std::vector<float> Values::floats() const { return typed<float>(*this, TensorType::FLOAT32); }
std::vector<int32_t> Values::ints() const { return typed<int32_t>(*this, TensorType::INT32); }
std::vector<int64_t> Values::int64s() const { return typed<int64_t>(*this, TensorType::INT64); }
std::vector<bool> Values::bools() const {
  EXPECT_EQ(type, TensorType::BOOL);
  std::vector<bool> out;
  if (type != TensorType::BOOL) return out;
  for (uint8_t b : bytes) out.push_back(b != 0);
  return out;
}

// ---- OpModelBuilder -----------------------------------------------------------

OpModelBuilder::OpModelBuilder() {
  def_.version = 3;
  def_.description = "gruwb kernel test";
  def_.buffers.push_back(std::make_unique<fb::BufferT>());  // the empty sentinel
  add_subgraph("main");
}

int OpModelBuilder::add_subgraph(const std::string& name) {
  auto sg = std::make_unique<fb::SubGraphT>();
  sg->name = name;
  def_.subgraphs.push_back(std::move(sg));
  return static_cast<int>(def_.subgraphs.size() - 1);
}

void OpModelBuilder::use_subgraph(int index) {
  ASSERT_GE(index, 0);
  ASSERT_LT(static_cast<size_t>(index), def_.subgraphs.size());
  current_ = index;
}

uint32_t OpModelBuilder::add_buffer(const std::vector<uint8_t>& data) {
  auto buffer = std::make_unique<fb::BufferT>();
  buffer->data = data;
  def_.buffers.push_back(std::move(buffer));
  return static_cast<uint32_t>(def_.buffers.size() - 1);
}

int OpModelBuilder::tensor(const std::string& name, std::vector<int32_t> shape, TensorType type) {
  auto t = std::make_unique<fb::TensorT>();
  t->name = name;
  t->shape = std::move(shape);
  t->type = type;
  subgraph().tensors.push_back(std::move(t));
  return static_cast<int>(subgraph().tensors.size() - 1);
}

int OpModelBuilder::input(const std::string& name, std::vector<int32_t> shape, TensorType type) {
  int t = tensor(name, std::move(shape), type);
  mark_input(t);
  return t;
}

int OpModelBuilder::output(const std::string& name, std::vector<int32_t> shape, TensorType type) {
  int t = tensor(name, std::move(shape), type);
  mark_output(t);
  return t;
}

int OpModelBuilder::constant(const std::string& name, const Values& values) {
  uint64_t expected_bytes = 0;
  EXPECT_TRUE(
      tensor_storage_bytes(values.type, static_cast<uint64_t>(values.elements()), &expected_bytes));
  EXPECT_EQ(expected_bytes, values.bytes.size())
      << "constant '" << name << "': shape and value count disagree";
  int t = tensor(name, values.shape, values.type);
  tensor_def(t).buffer = add_buffer(values.bytes);
  return t;
}

int OpModelBuilder::constant(const std::string& name, std::vector<int32_t> shape,
                             const std::vector<float>& values) {
  return constant(name, Values::f32(std::move(shape), values));
}

int OpModelBuilder::constant_i32(const std::string& name, std::vector<int32_t> shape,
                                 const std::vector<int32_t>& values) {
  return constant(name, Values::i32(std::move(shape), values));
}

int OpModelBuilder::constant_i64(const std::string& name, std::vector<int32_t> shape,
                                 const std::vector<int64_t>& values) {
  return constant(name, Values::i64(std::move(shape), values));
}

int OpModelBuilder::constant_int8(const std::string& name, std::vector<int32_t> shape,
                                  const std::vector<int8_t>& values,
                                  const std::vector<float>& scales,
                                  const std::vector<int64_t>& zero_points,
                                  int32_t quantized_dimension) {
  int t = constant(name, Values::i8(std::move(shape), values));
  auto q = std::make_unique<fb::QuantizationParametersT>();
  q->scale = scales;
  q->zero_point = zero_points.empty() ? std::vector<int64_t>(scales.size(), 0) : zero_points;
  q->quantized_dimension = quantized_dimension;
  tensor_def(t).quantization = std::move(q);
  return t;
}

int OpModelBuilder::variable(const std::string& name, std::vector<int32_t> shape, TensorType type,
                             const Values* initial) {
  int t = tensor(name, std::move(shape), type);
  tensor_def(t).is_variable = true;
  if (initial) tensor_def(t).buffer = add_buffer(initial->bytes);
  return t;
}

void OpModelBuilder::mark_input(int tensor) { subgraph().inputs.push_back(tensor); }
void OpModelBuilder::mark_output(int tensor) { subgraph().outputs.push_back(tensor); }

uint32_t OpModelBuilder::opcode_index(int32_t op_code, const std::string& custom_code) {
  for (size_t i = 0; i < def_.operator_codes.size(); ++i) {
    const fb::OperatorCodeT& code = *def_.operator_codes[i];
    if (static_cast<int32_t>(code.builtin_code) == op_code && code.custom_code == custom_code) {
      return static_cast<uint32_t>(i);
    }
  }
  auto code = std::make_unique<fb::OperatorCodeT>();
  code->builtin_code = static_cast<BuiltinOperator>(op_code);
  code->custom_code = custom_code;
  code->version = 1;
  def_.operator_codes.push_back(std::move(code));
  return static_cast<uint32_t>(def_.operator_codes.size() - 1);
}

void OpModelBuilder::op(int32_t op_code, const std::vector<int32_t>& inputs,
                        const std::vector<int32_t>& outputs, fb::BuiltinOptionsUnion options) {
  auto o = std::make_unique<fb::OperatorT>();
  o->opcode_index = opcode_index(op_code, "");
  o->inputs = inputs;
  o->outputs = outputs;
  o->builtin_options = std::move(options);
  subgraph().operators.push_back(std::move(o));
}

void OpModelBuilder::custom_op(const std::string& custom_code, const std::vector<int32_t>& inputs,
                               const std::vector<int32_t>& outputs,
                               const std::vector<uint8_t>& custom_options) {
  auto o = std::make_unique<fb::OperatorT>();
  o->opcode_index = opcode_index(kOpCustom, custom_code);
  o->inputs = inputs;
  o->outputs = outputs;
  o->custom_options = custom_options;
  o->custom_options_format = fb::CustomOptionsFormat::FLEXBUFFERS;
  subgraph().operators.push_back(std::move(o));
}

std::vector<uint8_t> OpModelBuilder::bytes(ModelFormat format) const {
  std::vector<uint8_t> out;
  std::string error;
  if (!tools::write_model(def_, format, &out, &error)) {
    ADD_FAILURE() << "writer: " << error;
    out.clear();
  }
  return out;
}

// ---- OpRunner -----------------------------------------------------------------

OpRunner::OpRunner(const OpModelBuilder& builder, ModelFormat format) {
  std::vector<uint8_t> bytes = builder.bytes(format);
  if (bytes.empty()) {
    error_ = "the writer refused the model";
    return;
  }
  if (!tools::load_model_bytes(std::move(bytes), "test model", &loaded_, &error_)) return;
  ok_ = runner_.prepare(loaded_.model, &error_);
}

void OpRunner::set_input(int index, const Values& values) {
  ASSERT_TRUE(ok_) << error_;
  ASSERT_LT(index, runner_.input_count());
  tools::NpyArray array;
  array.dtype = tools::npy_dtype_for(values.type);
  array.shape.assign(values.shape.begin(), values.shape.end());
  array.data = values.bytes;
  std::string error;
  EXPECT_TRUE(runner_.set_input(index, array, &error)) << error;
}

bool OpRunner::invoke() {
  if (!ok_) return false;
  Status status = runner_.interpreter().invoke();
  if (!status.ok()) error_ = status_text(status);
  return status.ok();
}

Values OpRunner::output(int index) {
  const Tensor* tensor = runner_.interpreter().output(index);
  Values v;
  v.type = tensor->type;
  v.shape.assign(tensor->shape.dims, tensor->shape.dims + tensor->shape.rank);
  size_t bytes = tensor->bytes;  // planned; a run-time-shaped output uses less
  if (tensor->dynamic) tensor_bytes(tensor->type, tensor->shape, &bytes);
  v.bytes.assign(tensor->data, tensor->data + bytes);
  return v;
}

std::vector<Values> run(const OpModelBuilder& builder, const std::vector<Values>& inputs,
                        ModelFormat format) {
  OpRunner runner(builder, format);
  if (!runner.ok()) {
    ADD_FAILURE() << "prepare: " << runner.error();
    return {};
  }
  for (size_t i = 0; i < inputs.size(); ++i) runner.set_input(static_cast<int>(i), inputs[i]);
  if (!runner.invoke()) {
    ADD_FAILURE() << "invoke: " << runner.error();
    return {};
  }
  std::vector<Values> outputs;
  for (int i = 0; i < runner.output_count(); ++i) outputs.push_back(runner.output(i));
  return outputs;
}

std::string prepare_error(const OpModelBuilder& builder) {
  OpRunner runner(builder);
  return runner.ok() ? "" : runner.error();
}

std::string invoke_error(const OpModelBuilder& builder, const std::vector<Values>& inputs) {
  OpRunner runner(builder);
  if (!runner.ok()) {
    ADD_FAILURE() << "prepare: " << runner.error();
    return "";
  }
  for (size_t i = 0; i < inputs.size(); ++i) runner.set_input(static_cast<int>(i), inputs[i]);
  return runner.invoke() ? "" : runner.error();
}

::testing::AssertionResult floats_near(const std::vector<float>& expected,
                                       const std::vector<float>& actual, float tolerance) {
  if (expected.size() != actual.size()) {
    return ::testing::AssertionFailure()
           << "expected " << expected.size() << " values, got " << actual.size();
  }
  for (size_t i = 0; i < expected.size(); ++i) {
    float diff = std::fabs(expected[i] - actual[i]);
    if (!(diff <= tolerance)) {  // NaN fails
      return ::testing::AssertionFailure()
             << "value " << i << ": expected " << expected[i] << ", got " << actual[i]
             << " (|diff| " << diff << " > " << tolerance << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

std::vector<float> iota_floats(int64_t n, float scale, float offset) {
  std::vector<float> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    out[static_cast<size_t>(i)] = static_cast<float>(i) * scale + offset;
  return out;
}

std::vector<int32_t> iota_ints(int64_t n, int32_t offset) {
  std::vector<int32_t> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out[static_cast<size_t>(i)] = static_cast<int32_t>(i) + offset;
  return out;
}

}  // namespace gruwb::test
