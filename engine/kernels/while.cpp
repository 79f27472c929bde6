// WHILE: loop-carried values flow op inputs -> (cond, body) -> op outputs.
// Our runtime keeps the current values in the op's output tensors and copies
// them into the cond/body inputs each iteration, as TFLite Micro does, so
// every subgraph keeps static shapes and planned memory. INT32 counters are
// ordinary int32 ADDs (the case micro runtimes choke on).
//
// Training (docs/training-design.md): the loop's trip count comes from its
// cond (LESS(counter, limit), counter starting at a constant and stepping by
// a constant in the body). Every body value an on-path body op reads or
// writes is kept per iteration on the loop's tape: the body's tensors point
// into the tape slot of the running iteration, so the forward pass writes the
// tape directly. Backward walks the iterations in reverse, points the body at
// each slot again, runs the body's backward and carries the loop values'
// gradients from one iteration to the one before.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <new>

#include "engine/kernels/data_util.h"
#include "engine/kernels/kernel_util.h"
#include "engine/kernels/op_cost.h"

namespace gruwb {
namespace {

// A bound, so that a model whose cond never turns false reports an error
// instead of hanging the host or the board. Recurrent loops run once per time
// step (thousands at most); a counted loop above it is refused at prepare.
// A build may lower it (the fuzz build does: 2^20 trips of even a 3-op body
// take 10 s under ASan, which is legitimate work, not a finding).
#ifndef GRUWB_MAX_LOOP_ITERATIONS
#define GRUWB_MAX_LOOP_ITERATIONS (int64_t{1} << 20)
#endif
constexpr int64_t kMaxIterations = GRUWB_MAX_LOOP_ITERATIONS;
// The trip count of a counted loop whose int32 counter never reaches its limit: it does not
// grow, or wraps around first (ADD wraps), so the cond stays true.
constexpr int64_t kNeverEnds = INT64_MAX;

// Loop values keep their shape (checked before every copy from a
// run-time-shaped body output), so `to`'s planned bytes are the bytes to move.
void copy_tensor(const Tensor& from, Tensor& to) {
  if (to.data && to.data != from.data) memcpy(to.data, from.data, to.bytes);
}

// A body output whose shape is computed at run time (the accumulator the
// converter rebuilds from slices every step) must come out of each iteration
// with the loop value's shape.
Status check_loop_shape(const Tensor& next, const Tensor& value, int i) {
  if (!next.dynamic || next.shape == value.shape) return Status();
  char planned[48], actual[48];
  format_shape(value.shape, planned, sizeof planned);
  format_shape(next.shape, actual, sizeof actual);
  return Status::error(StatusCode::kInvalidArgument,
                       "loop value %d '%s' comes out of the body as %s, not %s; loop values "
                       "must keep their shape",
                       i, value.name, actual, planned);
}

size_t align16(size_t n) { return (n + 15) & ~size_t{15}; }

// Training state, persistent (allocated in prepare when the loop trains).
struct WhileTraining {
  int32_t trips = 0;       // tape capacity in iterations
  int32_t iterations = 0;  // run by the last forward pass
  size_t stride = 0;       // tape bytes per iteration
  int carry_slot = -1;     // backward scratch: the loop values' gradients
};

// The op in `sg` writing tensor `t`, or -1.
int producer_of(const SubgraphView& sg, int32_t t) {
  for (int o = 0; o < sg.operator_count; ++o) {
    for (int32_t out : sg.op(o).outputs) {
      if (out == t) return o;
    }
  }
  return -1;
}

int input_position(Span<int32_t> inputs, int32_t t) {
  for (size_t i = 0; i < inputs.size; ++i) {
    if (inputs[i] == t) return static_cast<int>(i);
  }
  return -1;
}

bool constant_scalar_i32(const Tensor* t, int64_t* value) {
  if (!t || t->kind != TensorKind::kConstant || t->type != TensorType::INT32 ||
      t->elements() != 1 || t->bytes < sizeof(int32_t)) {
    return false;
  }
  *value = t->i32()[0];
  return true;
}

// The model file's view of the same question, for the cost function: no
// prepare has run, so only constants stored in the file count.
bool constant_scalar_i32(const SubgraphView& sg, int32_t t, int64_t* value) {
  if (t < 0 || t >= sg.tensor_count) return false;
  const TensorView view = sg.tensor(t);
  if (view.is_variable || view.type != TensorType::INT32 || view.element_count() != 1 ||
      view.data.size < sizeof(int32_t)) {
    return false;
  }
  int32_t v = 0;
  memcpy(&v, view.data.data, sizeof v);
  *value = v;
  return true;
}

// Iterations of a loop whose cond is LESS(counter, limit): the counter is a
// loop value starting at a constant that the body steps by a positive
// constant (ADD); the limit is a constant of the cond or a loop value the
// body passes through unchanged. -1 when the loop does not have this form,
// kNeverEnds when the counter does not grow or its last step overflows int32.
// `constant(subgraph, tensor, &value)` says whether a tensor is a constant
// INT32 scalar: prepare asks the runtime's tensors (folded constants
// included), the cost function the model file.
template <typename ConstantScalar>
int64_t less_trips(const SubgraphView& caller, const OperatorView& loop, const SubgraphView& cond,
                   const SubgraphView& body, int less, ConstantScalar constant) {
  const auto loop_input = [&](int i) {
    return static_cast<size_t>(i) < loop.inputs.size ? loop.inputs[static_cast<size_t>(i)] : -1;
  };
  if (less < 0) return -1;
  OperatorView op = cond.op(less);
  if (op.op_code != static_cast<int32_t>(BuiltinOperator::LESS) || op.inputs.size != 2) return -1;
  const int counter = input_position(cond.inputs, op.inputs[0]);
  if (counter < 0) return -1;
  int64_t limit = 0;
  if (!constant(cond.index, op.inputs[1], &limit)) {
    const int j = input_position(cond.inputs, op.inputs[1]);
    if (j < 0 || body.outputs[static_cast<size_t>(j)] != body.inputs[static_cast<size_t>(j)] ||
        !constant(caller.index, loop_input(j), &limit)) {
      return -1;
    }
  }
  int64_t start = 0;
  if (!constant(caller.index, loop_input(counter), &start)) return -1;
  const int32_t next = body.outputs[static_cast<size_t>(counter)];
  const int add = producer_of(body, next);
  if (add < 0) return -1;
  OperatorView step_op = body.op(add);
  if (step_op.op_code != static_cast<int32_t>(BuiltinOperator::ADD) || step_op.inputs.size != 2) {
    return -1;
  }
  const int32_t counter_in = body.inputs[static_cast<size_t>(counter)];
  int64_t step = 0;
  if (step_op.inputs[0] == counter_in) {
    if (!constant(body.index, step_op.inputs[1], &step)) return -1;
  } else if (step_op.inputs[1] == counter_in) {
    if (!constant(body.index, step_op.inputs[0], &step)) return -1;
  } else {
    return -1;
  }
  if (limit <= start) return 0;
  if (step <= 0) return kNeverEnds;
  const int64_t trips = (limit - start + step - 1) / step;
  return start + trips * step > INT32_MAX ? kNeverEnds : trips;
}

// The cond is one LESS, or LOGICAL_AND of two (TF 2.x: iteration <
// maximum_iterations and time < T; the fewer trips win, and a wrapping
// counter ends nothing).
template <typename ConstantScalar>
int64_t count_trips(const Model& model, const SubgraphView& caller, const OperatorView& loop,
                    ConstantScalar constant) {
  const auto* options = loop.options<fb::WhileOptions>();
  if (!options) return -1;
  SubgraphView cond = model.subgraph(options->cond_subgraph_index());
  SubgraphView body = model.subgraph(options->body_subgraph_index());
  const int top = producer_of(cond, cond.outputs[0]);
  if (top < 0) return -1;
  OperatorView op = cond.op(top);
  if (op.op_code != static_cast<int32_t>(BuiltinOperator::LOGICAL_AND)) {
    return less_trips(caller, loop, cond, body, top, constant);
  }
  if (op.inputs.size != 2) return -1;
  const int64_t a = less_trips(caller, loop, cond, body, producer_of(cond, op.inputs[0]), constant);
  const int64_t b = less_trips(caller, loop, cond, body, producer_of(cond, op.inputs[1]), constant);
  if (a < 0 || b < 0) return -1;
  return a < b ? a : b;
}

int64_t trip_count(OpContext& ctx) {
  const SubgraphRunner subgraphs = ctx.subgraphs();
  const Model& model = subgraphs.model();
  return count_trips(model, model.subgraph(ctx.subgraph_index()), ctx.op(),
                     [&](int subgraph, int32_t t, int64_t* value) {
                       if (t < 0) return false;
                       return constant_scalar_i32(&subgraphs.tensor(subgraph, t), value);
                     });
}

// One iteration's tape slot holds, per taped body tensor in index order, its
// values and, for a run-time-shaped tensor (Tensor::dynamic), the shape it
// had in that iteration, which its ops' backward steps need again.
size_t slot_bytes(const Tensor& tensor) {
  return align16(tensor.bytes) + (tensor.dynamic ? align16(sizeof(Shape)) : 0);
}

// Calls f(tensor, values, shape) for every taped body tensor with where its values and,
// when it is run-time-shaped, its shape sit in one iteration's tape slot.
template <typename F>
void for_each_taped(const SubgraphRunner& subgraphs, int body, uint8_t* slot, F f) {
  size_t offset = 0;
  for (int t = 0; t < subgraphs.tensor_count(body); ++t) {
    if (!subgraphs.on_tape(body, t)) continue;
    Tensor& tensor = subgraphs.tensor(body, t);
    f(tensor, slot + offset, slot + offset + align16(tensor.bytes));
    offset += slot_bytes(tensor);
  }
}

// Points the body's taped tensors at one iteration's tape slot; with
// `restore_shapes`, gives the run-time-shaped ones that iteration's shapes.
void point_at_slot(const SubgraphRunner& subgraphs, int body, uint8_t* slot, bool restore_shapes) {
  for_each_taped(subgraphs, body, slot, [&](Tensor& tensor, uint8_t* values, uint8_t* shape) {
    tensor.data = values;
    if (tensor.dynamic && restore_shapes) memcpy(&tensor.shape, shape, sizeof(Shape));
  });
}

// After the body ran: the shapes its run-time-shaped tensors had.
void save_shapes(const SubgraphRunner& subgraphs, int body, uint8_t* slot) {
  for_each_taped(subgraphs, body, slot, [](Tensor& tensor, uint8_t*, uint8_t* shape) {
    if (tensor.dynamic) memcpy(shape, &tensor.shape, sizeof(Shape));
  });
}

// `trips`: trip_count(ctx), which prepare has counted already (-1: unknown).
Status prepare_training(OpContext& ctx, int64_t trips) {
  const auto* options = ctx.op().options<fb::WhileOptions>();
  SubgraphRunner subgraphs = ctx.subgraphs();
  const int body = options->body_subgraph_index();
  if (trips < 0) {
    return Status::error(StatusCode::kUnsupported,
                         "cannot train through this loop: its trip count is unknown at prepare "
                         "(cond subgraph %d must be LESS(counter, limit), or LOGICAL_AND of two, "
                         "with the counter "
                         "starting at a constant, stepped by a positive constant in body "
                         "subgraph %d, and a constant limit)",
                         static_cast<int>(options->cond_subgraph_index()), body);
  }
  void* memory = nullptr;
  GRUWB_RETURN_IF_ERROR(ctx.allocate_persistent(sizeof(WhileTraining), &memory));
  auto* train = new (memory) WhileTraining;
  train->trips = static_cast<int32_t>(trips);
  // The tape: every activation an on-path body op reads or writes.
  subgraphs.keep_on_tape(body);
  for (int t = 0; t < subgraphs.tensor_count(body); ++t) {
    if (!subgraphs.on_tape(body, t)) continue;
    Tensor& tensor = subgraphs.tensor(body, t);
    if (!tensor_bytes(tensor.type, tensor.shape, &tensor.bytes)) {
      return Status::error(StatusCode::kUnsupported, "body tensor %d '%s' has %s values", t,
                           tensor.name, tensor_type_name(tensor.type));
    }
    train->stride += slot_bytes(tensor);
  }
  GRUWB_RETURN_IF_ERROR(ctx.request_tape(static_cast<size_t>(trips) * train->stride));
  size_t carry_bytes = 0;
  for (int i = 0; i < ctx.input_count(); ++i) {
    const Tensor* value = ctx.input(i);
    if (value->type == TensorType::FLOAT32) carry_bytes += sizeof(float) * value->elements();
  }
  GRUWB_RETURN_IF_ERROR(ctx.request_backward_scratch(carry_bytes, &train->carry_slot));
  ctx.set_user_data(train);
  return Status();
}

Status prepare(OpContext& ctx) {
  const auto* options = ctx.op().options<fb::WhileOptions>();  // reader checked presence
  SubgraphRunner subgraphs = ctx.subgraphs();
  const Model& model = subgraphs.model();
  SubgraphView cond = model.subgraph(options->cond_subgraph_index());
  SubgraphView body = model.subgraph(options->body_subgraph_index());
  for (int i = 0; i < ctx.input_count(); ++i) {
    const Tensor* value = ctx.input(i);
    if (!value) return Status::error(StatusCode::kInvalidModel, "loop value %d is omitted", i);
    for (const SubgraphView* called : {&cond, &body}) {
      const SubgraphView& sg = *called;
      Tensor& arg = subgraphs.input(sg.index, i);
      // A Flex TensorList (VARIANT in the file) is a dense tensor here (tensor_list.cpp).
      if (arg.type == TensorType::VARIANT) arg.type = value->type;
      if (arg.type != value->type) {
        return Status::error(
            StatusCode::kInvalidModel, "loop value %d is %s but subgraph %d '%s' takes %s", i,
            tensor_type_name(value->type), sg.index, sg.name, tensor_type_name(arg.type));
      }
      arg.shape = value->shape;
    }
  }
  GRUWB_RETURN_IF_ERROR(subgraphs.prepare(cond.index));
  GRUWB_RETURN_IF_ERROR(subgraphs.prepare(body.index));
  const Tensor& condition = subgraphs.output(cond.index, 0);
  if (condition.type != TensorType::BOOL || condition.elements() != 1) {
    return Status::error(StatusCode::kInvalidModel, "cond subgraph %d must return one BOOL",
                         cond.index);
  }
  for (int i = 0; i < ctx.output_count(); ++i) {
    const Tensor* value = ctx.input(i);
    const Tensor& next = subgraphs.output(body.index, i);
    // A run-time-shaped body output is checked in eval; its bound may be larger.
    const bool same_shape =
        next.dynamic ? next.shape.rank == value->shape.rank : next.shape == value->shape;
    if (!same_shape || next.type != value->type) {
      char before[48], after[48];
      format_shape(value->shape, before, sizeof before);
      format_shape(next.shape, after, sizeof after);
      return Status::error(StatusCode::kUnsupported,
                           "loop value %d changes from %s %s to %s %s in the body; loop values "
                           "must keep their shape",
                           i, tensor_type_name(value->type), before, tensor_type_name(next.type),
                           after);
    }
    Tensor* output = ctx.output(i);
    output->type = value->type;
    set_output_shape(output, value->shape);
  }
  const int64_t trips = trip_count(ctx);
  if (trips == kNeverEnds) {
    return Status::error(StatusCode::kUnsupported,
                         "the loop's int32 counter never reaches its limit (it does not grow, "
                         "or wraps around first)");
  }
  if (trips > kMaxIterations) {
    return Status::error(StatusCode::kUnsupported,
                         "the loop counts %lld iterations, more than the limit of %lld",
                         static_cast<long long>(trips), static_cast<long long>(kMaxIterations));
  }
  if (ctx.training()) GRUWB_RETURN_IF_ERROR(prepare_training(ctx, trips));
  return Status();
}

Status eval(OpContext& ctx) {
  const auto* options = ctx.op().options<fb::WhileOptions>();
  SubgraphRunner subgraphs = ctx.subgraphs();
  const int cond_index = options->cond_subgraph_index();
  const int body_index = options->body_subgraph_index();
  const Tensor& condition = subgraphs.output(cond_index, 0);
  const int n = ctx.output_count();
  auto* train = ctx.training() ? static_cast<WhileTraining*>(ctx.user_data()) : nullptr;
  uint8_t* tape = static_cast<uint8_t*>(ctx.tape());
  for (int i = 0; i < n; ++i) copy_tensor(*ctx.input(i), *ctx.output(i));
  for (int64_t iteration = 0;; ++iteration) {
    if (iteration == kMaxIterations) {
      return Status::error(StatusCode::kInvalidArgument,
                           "loop did not finish after %lld iterations",
                           static_cast<long long>(kMaxIterations));
    }
    for (int i = 0; i < n; ++i) copy_tensor(*ctx.output(i), subgraphs.input(cond_index, i));
    GRUWB_RETURN_IF_ERROR(subgraphs.invoke(cond_index));
    if (!*reinterpret_cast<const bool*>(condition.data)) {
      if (train) train->iterations = static_cast<int32_t>(iteration);
      break;
    }
    if (train) {
      if (iteration >= train->trips) {
        return Status::error(StatusCode::kInvalidArgument,
                             "loop runs more than the %d iterations its training tape holds",
                             static_cast<int>(train->trips));
      }
      point_at_slot(subgraphs, body_index, tape + static_cast<size_t>(iteration) * train->stride,
                    false);
    }
    for (int i = 0; i < n; ++i) copy_tensor(*ctx.output(i), subgraphs.input(body_index, i));
    GRUWB_RETURN_IF_ERROR(subgraphs.invoke(body_index));
    if (train) {
      save_shapes(subgraphs, body_index, tape + static_cast<size_t>(iteration) * train->stride);
    }
    for (int i = 0; i < n; ++i) {
      const Tensor& next = subgraphs.output(body_index, i);
      GRUWB_RETURN_IF_ERROR(check_loop_shape(next, *ctx.output(i), i));
      copy_tensor(next, *ctx.output(i));
    }
  }
  return Status();
}

// The loop values' gradients (the carry) start as the WHILE outputs'
// gradients; each iteration, newest first, adds them to the body outputs'
// gradients, runs the body's backward and takes the body inputs' gradients as
// the carry for the iteration before. What is left flows into the WHILE's
// inputs.
Status backward(OpContext& ctx) {
  const auto* options = ctx.op().options<fb::WhileOptions>();
  SubgraphRunner subgraphs = ctx.subgraphs();
  const int body = options->body_subgraph_index();
  SubgraphView body_view = subgraphs.model().subgraph(body);
  auto* train = static_cast<WhileTraining*>(ctx.user_data());
  float* carry = static_cast<float*>(ctx.backward_scratch(train->carry_slot));
  if (!carry) return Status();
  uint8_t* tape = static_cast<uint8_t*>(ctx.tape());
  const int n = ctx.input_count();
  float* at = carry;
  for (int i = 0; i < n; ++i) {
    const Tensor* value = ctx.output(i);
    if (value->type != TensorType::FLOAT32) continue;
    const Tensor* dy = ctx.gradient(value);
    if (dy) {
      memcpy(at, dy->data, dy->bytes);
    } else {
      memset(at, 0, sizeof(float) * static_cast<size_t>(value->elements()));
    }
    at += value->elements();
  }
  const bool report = ctx.wants_state_gradients();
  for (int32_t k = train->iterations - 1; k >= 0; --k) {
    if (report) {
      // ||dL/d(values this iteration wrote)||: the state's gradient at step k.
      double sum = 0.0;
      at = carry;
      for (int i = 0; i < n; ++i) {
        const Tensor* value = ctx.input(i);
        if (value->type != TensorType::FLOAT32) continue;
        const int64_t count = value->elements();
        if (body_view.outputs[static_cast<size_t>(i)] != body_view.inputs[static_cast<size_t>(i)]) {
          for (int64_t e = 0; e < count; ++e) sum += static_cast<double>(at[e]) * at[e];
        }
        at += count;
      }
      ctx.report_state_gradient(k, static_cast<float>(std::sqrt(sum)));
    }
    if (tape) point_at_slot(subgraphs, body, tape + static_cast<size_t>(k) * train->stride, true);
    subgraphs.zero_activation_gradients(body);
    at = carry;
    for (int i = 0; i < n; ++i) {
      const Tensor* value = ctx.input(i);
      if (value->type != TensorType::FLOAT32) continue;
      Tensor* g = subgraphs.gradient(body, &subgraphs.output(body, i));
      if (g) add_floats(g->f32(), at, value->elements());
      at += value->elements();
    }
    GRUWB_RETURN_IF_ERROR(subgraphs.backward(body));
    at = carry;
    for (int i = 0; i < n; ++i) {
      const Tensor* value = ctx.input(i);
      if (value->type != TensorType::FLOAT32) continue;
      const Tensor* g = subgraphs.gradient(body, &subgraphs.input(body, i));
      if (g) {
        memcpy(at, g->data, g->bytes);
      } else {
        memset(at, 0, sizeof(float) * static_cast<size_t>(value->elements()));
      }
      at += value->elements();
    }
  }
  at = carry;
  for (int i = 0; i < n; ++i) {
    const Tensor* value = ctx.input(i);
    if (value->type != TensorType::FLOAT32) continue;
    Tensor* dx = ctx.gradient(value);
    if (dx) add_floats(dx->f32(), at, value->elements());
    at += value->elements();
  }
  return Status();
}

// The body (and the cond, which runs once more) times the trip count when
// the loop has the counted form prepare trains through; else one iteration,
// said so in the formula.
OpCost cost(const OpCostQuery& q) {
  const auto* options = q.op.options<fb::WhileOptions>();
  if (!options) return OpCost();
  const Model& model = *q.subgraph.model;
  const uint64_t cond = subgraph_macs(model, options->cond_subgraph_index(), q.ops, q.prepared);
  const uint64_t body = subgraph_macs(model, options->body_subgraph_index(), q.ops, q.prepared);
  const int64_t trips = count_trips(model, q.subgraph, q.op, [&](int s, int32_t t, int64_t* v) {
    if (constant_scalar_i32(model.subgraph(s), t, v)) return true;
    // A limit folded at prepare (T from SHAPE of a dynamic-batch input).
    return constant_scalar_i32(prepared_tensor(q.prepared, s, t), v);
  });
  if (trips < 0 || trips == kNeverEnds) {
    if (cond + body == 0) return OpCost();
    return make_cost(cond + body, "trip count unknown: cond {} + body {} counted once",
                     {static_cast<int64_t>(cond), static_cast<int64_t>(body)});
  }
  const uint64_t n = static_cast<uint64_t>(trips);
  if (n * body + (n + 1) * cond == 0) return OpCost();
  if (cond == 0) {
    return make_cost(n * body, "{} iterations x body {}", {trips, static_cast<int64_t>(body)});
  }
  return make_cost(n * body + (n + 1) * cond, "{} iterations x body {} + {} x cond {}",
                   {trips, static_cast<int64_t>(body), trips + 1, static_cast<int64_t>(cond)});
}

}  // namespace

extern const KernelRegistration kWhileKernel = {static_cast<int32_t>(BuiltinOperator::WHILE),
                                                nullptr,
                                                prepare,
                                                eval,
                                                GRUWB_BACKWARD(backward),
                                                cost};

}  // namespace gruwb
