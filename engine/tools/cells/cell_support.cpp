#include "engine/tools/cells/cell_support.h"

#include <flatbuffers/flexbuffers.h>

#include <algorithm>

#include "engine/tools/initializers.h"

namespace gruwb::tools::cells {

std::vector<float> rows(const std::vector<float>& m, int cols, int first, int count) {
  auto begin = m.begin() + static_cast<ptrdiff_t>(first) * cols;
  return std::vector<float>(begin, begin + static_cast<ptrdiff_t>(count) * cols);
}

std::vector<float> hybrid_scales(const FusedCell& c, const std::vector<float>& scales, int first,
                                 int count) {
  if (!c.hybrid || first < 0 || count <= 0 ||
      scales.size() < static_cast<size_t>(first) + static_cast<size_t>(count)) {
    return {};
  }
  std::vector<float> piece(scales.begin() + first, scales.begin() + first + count);
  const bool int8 = std::all_of(piece.begin(), piece.end(), [](float x) { return x > 0; });
  return int8 ? piece : std::vector<float>();
}

std::string per_gate_scale_problem(const FusedCell& c, const char* op) {
  if (!c.hybrid) return "";
  const size_t H = static_cast<size_t>(c.config.units);
  for (const std::vector<float>* scales :
       {&c.weights->kernel_scales, &c.weights->recurrent_kernel_scales}) {
    for (size_t block = 0; H > 0 && block + H <= scales->size(); block += H) {
      if (!std::all_of(scales->begin() + block, scales->begin() + block + H,
                       [&](float x) { return x == (*scales)[block]; })) {
        return std::string("hybrid cell with one scale per row (per-channel): TFLite's hybrid ") +
               op + " op reads one scale per gate weight tensor";
      }
    }
  }
  return "";
}

fb::ActivationFunctionType fused_activation(const std::string& activation) {
  if (activation == "relu") return fb::ActivationFunctionType::RELU;
  if (activation == "linear") return fb::ActivationFunctionType::NONE;
  return fb::ActivationFunctionType::TANH;
}

std::string describe_activation(const CellConfig& c) {
  return c.activation != "tanh" ? ", " + c.activation : "";
}

void keras_weights(const CellConfig& c, int gates, bool two_biases, BiasInit bias_init, Rng& rng,
                   CellWeights* out) {
  const int gh = gates * c.units;
  out->kernel = glorot_uniform(rng, gh, c.features);
  out->recurrent_kernel = orthogonal(rng, gh, c.units);
  const bool uniform_bias = bias_init == BiasInit::kUniform;
  const std::vector<float> zeros(static_cast<size_t>(gh), 0.f);
  out->bias = uniform_bias ? uniform(rng, gh, 0.1f) : zeros;
  out->recurrent_bias.clear();
  if (two_biases) out->recurrent_bias = uniform_bias ? uniform(rng, gh, 0.1f) : zeros;
}

uint64_t gate_products_macs(const CellConfig& c, int gates) {
  return static_cast<uint64_t>(gates) * static_cast<uint64_t>(c.units) *
         static_cast<uint64_t>(c.features + c.units);
}

StepConstants whole_constants(GraphWriter& g, const CellConfig& c, const CellWeights& w, int gates,
                              const std::string& p) {
  const int gh = gates * c.units;
  StepConstants k;
  k.tensors.push_back(g.constant(p + "kernel", {gh, c.features}, w.kernel));
  k.tensors.push_back(g.constant(p + "bias", {gh}, w.bias));
  k.tensors.push_back(g.constant(p + "recurrent_kernel", {gh, c.units}, w.recurrent_kernel));
  return k;
}

int sequence_output(GraphWriter& g, const FusedCell& c, FusedPlan* plan, const std::string& p) {
  const int H = c.config.units, B = c.batch, T = c.timesteps;
  if (plan->sequence < 0)
    plan->sequence = g.tensor(p + "sequence", plan->time_major ? Dims{T, B, H} : Dims{B, T, H});
  return plan->sequence;
}

int fused_output(GraphWriter& g, const FusedCell& c, FusedPlan* plan, const std::string& p) {
  if (plan->need_sequence) return sequence_output(g, c, plan, p);
  if (plan->h_final < 0) plan->h_final = g.tensor(p + "h", {c.batch, c.config.units});
  return plan->h_final;
}

void fused_last_step(GraphWriter& g, const FusedCell& c, FusedPlan* plan, int out,
                     const std::string& p) {
  if (!plan->need_last || out == plan->h_final) return;  // not needed, or the op wrote it
  if (plan->h_final < 0) plan->h_final = g.tensor(p + "h", {c.batch, c.config.units});
  last_step(g, out, plan->time_major ? 0 : 1, p + "last", plan->h_final);
}

std::vector<uint8_t> cell_op_options(
    bool return_sequences, bool time_major,
    const std::vector<std::pair<std::string, std::string>>& strings) {
  flexbuffers::Builder fbb;
  fbb.Map([&] {
    fbb.Bool("return_sequences", return_sequences);
    fbb.Bool("time_major", time_major);
    for (const auto& [key, value] : strings) fbb.String(key.c_str(), value);
  });
  fbb.Finish();
  return fbb.GetBuffer();
}

}  // namespace gruwb::tools::cells
