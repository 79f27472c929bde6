/* The exported model's example: one inference on the input the exporter stored
   (example_data.h), its outputs printed and compared with what the host computed at export;
   with training exported, GRUWB_MODEL_BATCH_SIZE training steps on that sample, then the loss
   and the outputs after the update compared likewise. Exit status 0 when everything matches.
   Prints through example_print (example_io.h): stdio on a host, semihosting on a board. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "example/example_data.h"
#include "example/example_io.h"
#include "gruwb_model.h"

static uint8_t arena[GRUWB_MODEL_ARENA_BYTES] __attribute__((aligned(16)));

static void say(const char* text) { example_print(text); }

static float float_at(const uint8_t* bytes, size_t i) {
  float value;
  memcpy(&value, bytes + i * sizeof value, sizeof value);
  return value;
}

/* Prints an output beside the host's and returns 1 when they agree: float32 within
   EXAMPLE_TOLERANCE relative (a libm's last bit), other types byte for byte. */
static int compare(const char* label, int index, const struct ExampleTensor* host) {
  char line[160];
  size_t bytes = 0;
  const uint8_t* board = (const uint8_t*)gruwb_model_output(index, &bytes);
  if (!board || bytes != host->bytes) {
    snprintf(line, sizeof line, "%s output %d: %u bytes, the host's has %u\n", label, index,
             (unsigned)bytes, (unsigned)host->bytes);
    say(line);
    return 0;
  }
  int identical = memcmp(board, host->data, bytes) == 0, agree = identical;
  double worst = 0.0;
  if (host->is_float32) {
    for (size_t i = 0; i < bytes / 4; ++i) {
      const float a = float_at(board, i), b = float_at(host->data, i);
      const double scale = fabs((double)b) > 1.0 ? fabs((double)b) : 1.0;
      const double difference = fabs((double)a - (double)b) / scale;
      if (!(difference <= worst)) worst = difference;
      if (i < 8) {
        uint32_t bits;
        memcpy(&bits, board + i * 4, 4);
        /* newlib-nano prints no floats: millionths and the bit pattern */
        snprintf(line, sizeof line, "%s output %d[%u] = %ld e-6 (0x%08lx)\n", label, index,
                 (unsigned)i, (long)lround((double)a * 1e6), (unsigned long)bits);
        say(line);
      }
    }
    agree = worst <= EXAMPLE_TOLERANCE;
  }
  snprintf(line, sizeof line, "%s output %d: %s the host's (largest relative difference %ld e-9)\n",
           label, index,
           identical ? "bit-identical to"
           : agree   ? "agrees with"
                     : "DIFFERS from",
           (long)lround(worst * 1e9));
  say(line);
  return agree;
}

static void set_inputs(void) {
  for (int i = 0; i < EXAMPLE_INPUT_COUNT; ++i) {
    size_t bytes = 0;
    void* input = gruwb_model_input(i, &bytes);
    if (input && bytes == example_inputs[i].bytes) memcpy(input, example_inputs[i].data, bytes);
  }
}

int main(void) {
  char line[160];
  int status = gruwb_model_init(arena, sizeof arena);
  if (status != 0) {
    snprintf(line, sizeof line, "init failed: %s (arena %u bytes)\n", gruwb_model_error(),
             (unsigned)gruwb_model_arena_bytes());
    say(line);
    example_exit(1);
  }
  snprintf(line, sizeof line, "%s: arena %u of %u bytes, %d input(s), %d output(s)\n",
           GRUWB_MODEL_NAME, (unsigned)gruwb_model_arena_bytes(), (unsigned)sizeof arena,
           gruwb_model_input_count(), gruwb_model_output_count());
  say(line);
  int ok = gruwb_model_output_count() == EXAMPLE_OUTPUT_COUNT;
  set_inputs();
  if (gruwb_model_invoke() != 0) {
    snprintf(line, sizeof line, "invoke failed: %s\n", gruwb_model_error());
    say(line);
    example_exit(1);
  }
  for (int i = 0; ok && i < EXAMPLE_OUTPUT_COUNT; ++i)
    ok = compare("inference", i, &example_outputs[i]) && ok;
#if GRUWB_MODEL_TRAINING
  for (int step = 0; ok && step < GRUWB_MODEL_BATCH_SIZE; ++step) {
    size_t count = 0;
    float* label = gruwb_model_label(&count);
    float loss = 0.f;
    set_inputs();
    if (!label || count * sizeof(float) != sizeof example_label) {
      say("the label's size differs from the host's\n");
      example_exit(1);
    }
    memcpy(label, example_label, sizeof example_label);
    if (gruwb_model_train_step(&loss) != 0) {
      snprintf(line, sizeof line, "train step failed: %s\n", gruwb_model_error());
      say(line);
      example_exit(1);
    }
    const float host_loss = example_losses[step];
    const double difference = fabs((double)loss - (double)host_loss) /
                              (fabs((double)host_loss) > 1.0 ? fabs((double)host_loss) : 1.0);
    snprintf(line, sizeof line, "train step %d: loss %ld e-6, the host's %ld e-6\n", step + 1,
             (long)lround((double)loss * 1e6), (long)lround((double)host_loss * 1e6));
    say(line);
    ok = difference <= EXAMPLE_TOLERANCE;
  }
  set_inputs();
  if (ok && gruwb_model_invoke() != 0) ok = 0;
  for (int i = 0; ok && i < EXAMPLE_OUTPUT_COUNT; ++i)
    ok = compare("trained", i, &example_trained_outputs[i]) && ok;
#endif
  say(ok ? "example: outputs match the host\n" : "example: MISMATCH\n");
  example_exit(ok ? 0 : 1);
  return 0;
}
