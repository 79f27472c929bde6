#include "engine/train/loss_output.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace gruwb {
namespace {

constexpr int kMaxListed = 6;  // candidates named in one error line

// A bounded text buffer on the stack (messages end up in a Status anyway).
struct Line {
  char text[Status::kMessageCapacity] = {};
  size_t length = 0;

  void add(const char* format, ...) __attribute__((format(printf, 2, 3))) {
    if (length + 1 >= sizeof text) return;
    va_list args;
    va_start(args, format);
    const int n = vsnprintf(text + length, sizeof text - length, format, args);
    va_end(args);
    if (n > 0) length += static_cast<size_t>(n);
    if (length >= sizeof text) length = sizeof text - 1;
  }
};

// "'name' [1,2,128,2]"
void add_output(Line* line, const SubgraphView& sg, int32_t index) {
  TensorView t = sg.tensor(sg.outputs[static_cast<size_t>(index)]);
  line->add("'%s' [", t.name);
  for (size_t d = 0; d < t.shape.size; ++d)
    line->add(d ? ",%d" : "%d", static_cast<int>(t.shape[d]));
  line->add("]");
  if (t.type != TensorType::FLOAT32) line->add(" %s", tensor_type_name(t.type));
}

void add_outputs(Line* line, const SubgraphView& sg, const bool* listed) {
  int shown = 0, total = 0;
  for (int32_t o = 0; o < static_cast<int32_t>(sg.outputs.size); ++o) {
    if (!listed[o]) continue;
    ++total;
    if (shown == kMaxListed) continue;
    line->add(shown ? ", " : "");
    add_output(line, sg, o);
    ++shown;
  }
  if (total > shown) line->add(" and %d more", total - shown);
}

bool is_shape_only(int32_t op_code) {
  return op_code == static_cast<int32_t>(BuiltinOperator::RESHAPE) ||
         op_code == static_cast<int32_t>(BuiltinOperator::SQUEEZE) ||
         op_code == static_cast<int32_t>(BuiltinOperator::EXPAND_DIMS);
}

// The op of subgraph 0 writing tensor t, or -1 (an input or constant).
int producer_of(const SubgraphView& sg, int32_t t) {
  for (int o = 0; o < sg.operator_count; ++o) {
    for (int32_t out : sg.op(o).outputs) {
      if (out == t) return o;
    }
  }
  return -1;
}

bool is_float(const SubgraphView& sg, int32_t index) {
  return sg.tensor(sg.outputs[static_cast<size_t>(index)]).type == TensorType::FLOAT32;
}

bool fits(const SubgraphView& sg, int32_t index, const LossOutputRequest& request) {
  TensorView t = sg.tensor(sg.outputs[static_cast<size_t>(index)]);
  const int64_t elements = static_cast<int64_t>(t.element_count());
  if (request.label_width > 0 && elements != request.label_width) return false;
  if (request.class_count > 0) {
    const int64_t row = t.shape.size > 0 ? t.shape[t.shape.size - 1] : 1;
    if (elements != row || row < request.class_count) return false;
  }
  return true;
}

Status ambiguous(const SubgraphView& sg, const bool* candidates, const char* what) {
  Line line;
  line.add("%s: ", what);
  add_outputs(&line, sg, candidates);
  line.add("; choose the one the loss uses with --output NAME");
  return Status::error(StatusCode::kInvalidArgument, "%s", line.text);
}

Status by_name(const SubgraphView& sg, const char* name, int32_t* output) {
  const int32_t count = static_cast<int32_t>(sg.outputs.size);
  for (int32_t o = 0; o < count; ++o) {
    if (strcmp(sg.tensor(sg.outputs[static_cast<size_t>(o)]).name, name) == 0) {
      *output = o;
      return Status();
    }
  }
  // No output has that name: digits name a position.
  int32_t position = 0;
  bool digits = name[0] != '\0' && strlen(name) <= 6;
  for (const char* c = name; digits && *c; ++c) {
    digits = *c >= '0' && *c <= '9';
    position = position * 10 + (*c - '0');
  }
  if (digits && position < count) {
    *output = position;
    return Status();
  }
  bool all[64] = {};
  for (int32_t o = 0; o < count && o < 64; ++o) all[o] = true;
  Line line;
  line.add("the model has no output named '%s'; its outputs are ", name);
  add_outputs(&line, sg, all);
  return Status::error(StatusCode::kInvalidArgument, "%s", line.text);
}

}  // namespace

bool output_is_activation_fed(const Model& model, int32_t index) {
  SubgraphView sg = model.subgraph(0);
  if (index < 0 || index >= static_cast<int32_t>(sg.outputs.size)) return false;
  int32_t t = sg.outputs[static_cast<size_t>(index)];
  // Bounded: a chain of shape-only ops cannot be longer than the op count.
  for (int hop = 0; hop <= sg.operator_count; ++hop) {
    const int o = producer_of(sg, t);
    if (o < 0) return false;
    OperatorView op = sg.op(o);
    if (op.op_code == static_cast<int32_t>(BuiltinOperator::SOFTMAX) ||
        op.op_code == static_cast<int32_t>(BuiltinOperator::LOGISTIC)) {
      return true;
    }
    if (!is_shape_only(op.op_code) || op.inputs.size < 1) return false;
    t = op.inputs[0];
  }
  return false;
}

Status choose_loss_output(const Model& model, const LossOutputRequest& request, int32_t* output) {
  *output = -1;
  if (!model.table()) return Status::error(StatusCode::kInvalidArgument, "model is not loaded");
  SubgraphView sg = model.subgraph(0);
  const int32_t count = static_cast<int32_t>(sg.outputs.size);
  if (count < 1) {
    return Status::error(StatusCode::kInvalidModel, "subgraph 0 has no output to train against");
  }
  if (count > 64) {
    return Status::error(StatusCode::kUnsupported, "the model has %d outputs, at most 64 train",
                         static_cast<int>(count));
  }
  int32_t chosen = -1;
  if (request.name && request.name[0] != '\0') {
    GRUWB_RETURN_IF_ERROR(by_name(sg, request.name, &chosen));
  } else if (request.index >= 0) {
    if (request.index >= count) {
      return Status::error(StatusCode::kInvalidArgument,
                           "loss output %d asked, the model has %d output(s)",
                           static_cast<int>(request.index), static_cast<int>(count));
    }
    chosen = request.index;
  }
  if (chosen >= 0) {
    if (!is_float(sg, chosen)) {
      Line line;
      line.add("output ");
      add_output(&line, sg, chosen);
      line.add(" is not float32: losses need float32");
      return Status::error(StatusCode::kUnsupported, "%s", line.text);
    }
    *output = chosen;
    return Status();
  }
  if (count == 1) {
    *output = 0;  // nothing to choose; the data check names any mismatch
    return Status();
  }
  bool activation_fed[64] = {}, fitting[64] = {};
  int activation_count = 0, fitting_count = 0;
  for (int32_t o = 0; o < count; ++o) {
    if (!is_float(sg, o) || !fits(sg, o, request)) continue;
    fitting[o] = true;
    ++fitting_count;
    chosen = fitting_count == 1 ? o : chosen;
    if (output_is_activation_fed(model, o)) {
      activation_fed[o] = true;
      ++activation_count;
    }
  }
  if (activation_count == 1) {
    for (int32_t o = 0; o < count; ++o) {
      if (activation_fed[o]) *output = o;
    }
    return Status();
  }
  if (activation_count > 1) {
    return ambiguous(sg, activation_fed, "several outputs come from SOFTMAX/LOGISTIC");
  }
  if (fitting_count == 1) {
    *output = chosen;
    return Status();
  }
  if (fitting_count > 1) {
    return ambiguous(sg, fitting,
                     request.label_width > 0 || request.class_count > 0
                         ? "several float outputs fit the labels"
                         : "several float outputs could take the loss");
  }
  bool all[64] = {};
  for (int32_t o = 0; o < count; ++o) all[o] = true;
  Line line;
  if (request.label_width <= 0 && request.class_count <= 0) {
    line.add("no output is float32 (losses need float32): ");
  } else if (request.label_width > 0) {
    line.add("no float output has the labels' %lld values per sample: ",
             static_cast<long long>(request.label_width));
  } else {
    line.add("no float output is one row of at least %lld classes: ",
             static_cast<long long>(request.class_count));
  }
  add_outputs(&line, sg, all);
  line.add("; choose one with --output NAME");
  return Status::error(StatusCode::kInvalidArgument, "%s", line.text);
}

}  // namespace gruwb
