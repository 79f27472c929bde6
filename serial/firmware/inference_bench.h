#pragma once
// BENCH (docs/serial-protocol.md): the uploaded model's inference timed on
// the board. The model runs in its own Interpreter and arena in the RAM the
// board is not using, so a configured (ready, paused, done) training run is
// left as it was; inference reads the model as uploaded, never the weights a
// run trained. The host runs this same code on its CPU for the reference
// outputs (serial/link/host_reference.h), so only the CPU differs.

#include <cstddef>
#include <cstdint>

#include "engine/model/model.h"
#include "engine/runtime/interpreter.h"
#include "serial/protocol/messages.h"

namespace gruwb::serial {

// Fills every model input from `seed`: FLOAT32 uniform in [-1, 1) (24-bit
// steps, exact in float), INT8/UINT8 the generator's bytes, other types zero.
// Pcg32 (engine/train/pcg32.h; seed, stream 0x42454e43 "BENC"): the same values on every CPU.
void fill_bench_inputs(Interpreter& interpreter, uint32_t seed);

// The board's cycle clock (BoardSupport::cycles: cycles, or microseconds on
// the host simulation), as a plain function pointer (no heap, no
// std::function): now(context).
struct BenchClock {
  uint64_t (*now)(void* context) = nullptr;
  void* context = nullptr;
};

// Prepares `model` in `ram` (the run times first, request.runs x u32, then
// the arena), runs one untimed inference, then request.runs timed ones
// (variables reset before each, as independent windows) and fills `out`
// (clock_hz is left to the caller). kOutOfMemory names what it needed.
// `interpreter` is the caller's (it is large for a stack).
Status run_inference_bench(const Model& model, const BenchRequest& request, uint8_t* ram,
                           size_t ram_bytes, const BenchClock& clock, Interpreter* interpreter,
                           BenchReply* out);

}  // namespace gruwb::serial
