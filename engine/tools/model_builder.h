#pragma once
// Model builder: fresh recurrent classifiers
//   input [1,T,F] float32 -> [normalisation: SUB mean, MUL 1/sqrt(var)]
//   -> RNN cell (any registered cell type, cells/cell_registry.h; H units, last state)
//   -> Dense layers (ReLU) -> Dense C -> SOFTMAX [1,C]
// with Keras-style initialisation, in three layouts that compute the same
// function for the same weights:
//   fused     the cell's one recurrent op (its descriptor's emit_fused: Circle GRU
//             (-5) / GRUWB_GRU custom op / UNIDIRECTIONAL_SEQUENCE_LSTM (Keras'
//             15-used-input form) / UNIDIRECTIONAL_SEQUENCE_RNN)
//   while     what TensorFlow's converter emits for Keras RNNs: main /
//             <cell>_while_cond / <cell>_while_body, TRANSPOSE to time-major,
//             GATHER by the time counter, the cell's step (its descriptor's) in the body
//             with the weights as body constants, STRIDED_SLICE of the last
//             step (shared/research/tflite-format.md §4.2-4.3)
//   unrolled  T copies of the cell in main (TRANSPOSE + UNPACK per step)
// docs/builder.md describes every graph op by op.

#include <cstdint>
#include <string>
#include <vector>

#include "engine/tools/cells/cell_descriptor.h"
#include "engine/tools/cells/cell_registry.h"
#include "engine/tools/model_writer.h"

namespace gruwb::tools {

enum class RnnLayout { kFused, kWhile, kUnrolled };
// kModern: Keras 2/3 GRUCell (sigmoid gates; reset_after true: 2 FCs per
// step; false: 3 FCs). kLegacy: the older converter-made body (reset_after
// false, one FC per gate and per side, hard_sigmoid as MUL/ADD/MINIMUM/
// MAXIMUM, SLICE/CONCATENATION output accumulator).
enum class GruVariant { kModern, kLegacy };
const char* rnn_layout_name(RnnLayout layout);  // "fused", "while", "unrolled"
const char* gru_variant_name(GruVariant variant);
const char* bias_init_name(BiasInit init);
bool parse_rnn_layout(const std::string& text, RnnLayout* out);
bool parse_gru_variant(const std::string& text, GruVariant* out);
bool parse_bias_init(const std::string& text, BiasInit* out);

// Weights in the FULLY_CONNECTED layout [out, in] (the Keras kernel transposed): the
// cell's (CellWeights, its descriptor's layout), then the Dense layers'.
struct DenseWeights {
  std::vector<float> kernel;  // [units, inputs]
  std::vector<float> bias;    // [units]
};
struct RnnWeights : CellWeights {
  std::vector<DenseWeights> dense;  // hidden layers, then the classifier
};

struct BuildSpec {
  const CellDescriptor* cell = default_cell();
  RnnLayout layout = RnnLayout::kFused;
  int timesteps = 60;
  int features = 3;
  int units = 60;
  int classes = 4;
  std::vector<int> dense;  // hidden Dense sizes (ReLU) before the classifier
  // Keras Normalization: both empty, or one value per feature.
  std::vector<float> mean;
  std::vector<float> variance;
  bool reset_after = true;  // cells with has_reset_after; kLegacy requires false
  GruVariant gru_variant = GruVariant::kModern;  // cells with has_legacy_body
  BiasInit bias_init = BiasInit::kKeras;
  uint64_t seed = 1;
  ModelFormat format = ModelFormat::kTflite;
  // The converter folds a transposed copy of every weight into each unrolled
  // step (hence "300 KB -> 39 MB"); true shares one copy between the steps.
  bool unrolled_shared_weights = false;
  // Explicit weights instead of the seeded initialisation (same weights in
  // every layout). Not owned; null = initialise from `seed`.
  const RnnWeights* weights = nullptr;
};

// The cell's variant as its descriptor's emitters read it.
CellConfig cell_config(const BuildSpec& spec);

// The recurrent op of the fused layout (the descriptor's fused_op): "GRU" (Circle,
// .circle files with a reset_after sigmoid/tanh GRU), "GRUWB_GRU" (our custom op, every
// other GRU), "UNIDIRECTIONAL_SEQUENCE_LSTM" or "UNIDIRECTIONAL_SEQUENCE_RNN".
const char* fused_op_name(const BuildSpec& spec);

// Checks sizes and option combinations; the error names the field and value.
bool check_spec(const BuildSpec& spec, std::string* error);

// Keras-style initial weights for `spec`, deterministic in spec.seed: the cell's
// descriptor's (glorot-uniform kernels, orthogonal recurrent kernels, biases per
// spec.bias_init), then Dense glorot-uniform with zero bias.
RnnWeights initial_weights(const BuildSpec& spec);

// Checks that `weights` have the sizes `spec` needs.
bool check_weights(const BuildSpec& spec, const RnnWeights& weights, std::string* error);

// Builds the model in spec.layout. The result writes and validates in
// spec.format (Circle GRU ops only appear when spec.format is kCircle).
bool build_model(const BuildSpec& spec, ModelDef* out, std::string* error);

// Figures of one built model; every report of `gruwb build` comes from here.
struct BuildFigures {
  RnnLayout layout = RnnLayout::kFused;
  uint64_t model_bytes = 0;
  uint64_t data_bytes = 0;    // all constant buffer bytes (the Analyzer's figure)
  uint64_t weight_bytes = 0;  // trainable weights: parameters of RnnWeights x 4
  uint64_t parameters = 0;    // elements of constant tensors (the Analyzer's figure)
  uint32_t subgraphs = 0;
  uint32_t ops = 0;      // over all subgraphs
  uint32_t tensors = 0;  // over all subgraphs
  uint64_t arena_bytes = 0;
  // The goal for fused files: model_bytes <= 1.05 x weight_bytes + 2 KB.
  uint64_t size_goal_bytes = 0;
  bool meets_size_goal = false;
};

// Number of trainable values in weights of `spec`'s sizes.
uint64_t trainable_parameters(const BuildSpec& spec);

// build_model + write_model + Model::load + analyzer + ModelRunner::prepare.
// `bytes` (optional) receives the file.
bool build_and_measure(const BuildSpec& spec, BuildFigures* figures, std::vector<uint8_t>* bytes,
                       std::string* error);

}  // namespace gruwb::tools
