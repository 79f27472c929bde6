#pragma once
// Which model output the loss goes on. Streaming models return their
// recurrent states beside the prediction (DTLN: [1,1,257] mask and
// [1,2,128,2] states), so "output 0" is a guess, and a wrong guess trains
// the states. One function decides, on the host and on the board alike (no
// heap, no exceptions), and never guesses silently:
//
//   1. an explicit output: by tensor name (or its position as digits,
//      "1"), or by position;
//   2. a model with one output: that output;
//   3. the float output fed by SOFTMAX or LOGISTIC (through RESHAPE,
//      SQUEEZE, EXPAND_DIMS), if exactly one of them fits the labels;
//   4. else the only float output that fits the labels;
//   otherwise an error naming the candidates (name and shape) and asking for
//   --output NAME.
//
//   LossOutputRequest request;
//   request.name = "Identity";  // or nullptr: automatic
//   request.label_width = 4;    // floats per sample of label rows, 0 = unknown
//   int32_t output = -1;
//   Status s = choose_loss_output(model, request, &output);  // subgraph 0's output index

#include <cstdint>

#include "engine/model/model.h"
#include "engine/model/status.h"

namespace gruwb {

struct LossOutputRequest {
  // Explicit choice: a tensor name among subgraph 0's outputs, or digits
  // naming a position when no output has that name. nullptr or "" = none.
  const char* name = nullptr;
  // Explicit position among subgraph 0's outputs; -1 = none. Checked
  // after `name`, when that is empty.
  int32_t index = -1;
  // What the labels can fill, to tell candidates apart (0 = unknown: every
  // float output fits). label_width: floats per sample of label rows
  // (one-hot or regression targets), the output's element count must equal
  // it. class_count: class ids up to class_count - 1, the output must be one
  // row of at least class_count values.
  int64_t label_width = 0;
  int64_t class_count = 0;
};

// Sets *output to the chosen index into subgraph 0's outputs. Errors
// (kInvalidArgument) are one line: an unknown name lists the outputs, an
// ambiguous choice lists the candidates, each as 'name' [shape].
Status choose_loss_output(const Model& model, const LossOutputRequest& request, int32_t* output);

// True when output `index` of subgraph 0 is produced by SOFTMAX or LOGISTIC,
// directly or through shape-only ops (RESHAPE, SQUEEZE, EXPAND_DIMS).
bool output_is_activation_fed(const Model& model, int32_t index);

}  // namespace gruwb
