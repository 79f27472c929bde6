#include "serial/firmware/inference_bench.h"

#include <algorithm>
#include <cstring>

#include "engine/train/pcg32.h"
#include "serial/protocol/crc32.h"

namespace gruwb::serial {
namespace {

constexpr size_t kAlign = Interpreter::kAlignment;
size_t align_up(size_t n) { return (n + kAlign - 1) & ~(kAlign - 1); }

}  // namespace

void fill_bench_inputs(Interpreter& interpreter, uint32_t seed) {
  Pcg32 rng(seed, 0x42454e43u);
  for (int i = 0; i < interpreter.input_count(); ++i) {
    Tensor* t = interpreter.input(i);
    if (t->type == TensorType::FLOAT32) {
      float* values = t->f32();
      for (size_t e = 0; e < t->bytes / sizeof(float); ++e)
        values[e] = static_cast<float>(rng.next() >> 8) * (2.0f / 16777216.0f) - 1.0f;
    } else if (t->type == TensorType::INT8 || t->type == TensorType::UINT8) {
      for (size_t e = 0; e < t->bytes; ++e) t->data[e] = static_cast<uint8_t>(rng.next() >> 24);
    } else {
      memset(t->data, 0, t->bytes);
    }
  }
}

Status run_inference_bench(const Model& model, const BenchRequest& request, uint8_t* ram,
                           size_t ram_bytes, const BenchClock& clock, Interpreter* interpreter,
                           BenchReply* out) {
  *out = BenchReply();
  const size_t times_bytes = align_up(static_cast<size_t>(request.runs) * sizeof(uint32_t));
  if (request.runs < 1 || request.runs > kMaxBenchRuns) {
    return Status::error(StatusCode::kInvalidArgument, "runs must be 1..%u, not %u",
                         static_cast<unsigned>(kMaxBenchRuns), static_cast<unsigned>(request.runs));
  }
  if (times_bytes >= ram_bytes) {
    return Status::error(StatusCode::kOutOfMemory,
                         "%u runs need %u bytes for their times, %u bytes are free",
                         static_cast<unsigned>(request.runs), static_cast<unsigned>(times_bytes),
                         static_cast<unsigned>(ram_bytes));
  }
  uint32_t* times = reinterpret_cast<uint32_t*>(ram);
  uint8_t* arena = ram + times_bytes;
  const size_t arena_room = ram_bytes - times_bytes;
  Status s = interpreter->prepare(model, arena, arena_room);
  if (!s.ok() && s.code() == StatusCode::kOutOfMemory) {
    return Status::error(StatusCode::kOutOfMemory, "inference needs %u bytes of arena, %u are free",
                         static_cast<unsigned>(interpreter->arena_bytes_needed()),
                         static_cast<unsigned>(arena_room));
  }
  GRUWB_RETURN_IF_ERROR(s);
  if (interpreter->output_count() < 1)
    return Status::error(StatusCode::kUnsupported, "the model has no output");
  // One untimed run: its outputs are every run's (same inputs, variables
  // reset), and a first-call cost stays out of the figures. The inputs are
  // written again before each run, untimed: the arena reuses their memory.
  fill_bench_inputs(*interpreter, request.seed);
  interpreter->reset_variables();
  GRUWB_RETURN_IF_ERROR(interpreter->invoke());
  for (uint32_t i = 0; i < request.runs; ++i) {
    fill_bench_inputs(*interpreter, request.seed);
    const uint64_t start = clock.now(clock.context);
    interpreter->reset_variables();
    s = interpreter->invoke();
    const uint64_t took = clock.now(clock.context) - start;
    if (!s.ok()) return s.prefix("inference %u: ", static_cast<unsigned>(i + 1));
    times[i] = took > 0xFFFFFFFFu ? 0xFFFFFFFFu : static_cast<uint32_t>(took);
    out->total_cycles += took;
  }
  std::sort(times, times + request.runs);
  out->runs = request.runs;
  out->min_cycles = times[0];
  out->max_cycles = times[request.runs - 1];
  // The lower middle of an even count: a measured value, never an average.
  out->median_cycles = times[(request.runs - 1) / 2];
  out->arena_bytes = static_cast<uint32_t>(interpreter->arena_bytes_needed());
  const Tensor* output = interpreter->output(0);
  out->output_type = static_cast<uint8_t>(output->type);
  out->output_bytes = static_cast<uint32_t>(output->bytes);
  out->output_crc32 = crc32(output->data, output->bytes);
  out->output_count =
      static_cast<uint8_t>(output->bytes < kBenchOutputBytes ? output->bytes : kBenchOutputBytes);
  memcpy(out->output, output->data, out->output_count);
  return Status();
}

}  // namespace gruwb::serial
