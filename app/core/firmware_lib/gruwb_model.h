/* The C API of a model exported by `gruwb export --to firmware-lib` (GRU Workbench,
   docs/export.md): the model, compiled in, run by the engine's interpreter in an arena the
   caller gives. C99 and C++; the library inside is C++17 without exceptions, RTTI or heap.

     static uint8_t arena[GRUWB_MODEL_ARENA_BYTES] __attribute__((aligned(16)));
     if (gruwb_model_init(arena, sizeof arena) != 0) puts(gruwb_model_error());
     float* x = (float*)gruwb_model_input(0, NULL);      // write it before every invoke
     ... fill x ...
     gruwb_model_invoke();
     const float* y = (const float*)gruwb_model_output(0, NULL);

   One model per program: the engine's symbols are the library's. */
#ifndef GRUWB_MODEL_H
#define GRUWB_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "gruwb_model_config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Prepares the model in `arena` (16-byte aligned, `arena_bytes` long); with training exported
   (GRUWB_MODEL_TRAINING) it is prepared for training. 0 on success, else the engine's status code
   (gruwb_model_error() says why; too small an arena: gruwb_model_arena_bytes() then gives the
   exact need). May be called again, e.g. with another arena; training starts over. */
int gruwb_model_init(void* arena, size_t arena_bytes);

/* Arena bytes the model needs on this CPU: exact once gruwb_model_init has planned it (even when
   the arena was too small), before that GRUWB_MODEL_ARENA_BYTES, the host's figure at export
   (64-bit pointers in its tables: at least a 32-bit board's). */
size_t gruwb_model_arena_bytes(void);

/* The last failure's one-line reason ("" after a success). */
const char* gruwb_model_error(void);

int gruwb_model_input_count(void);
int gruwb_model_output_count(void);

/* Where input `index` lives in the arena (NULL before init or out of range); `bytes` (may be
   NULL) gets its size. Write every input before every invoke: the arena reuses an input's memory
   once the model has read it. */
void* gruwb_model_input(int index, size_t* bytes);

/* Output `index`, valid until the next invoke (NULL before init or out of range). */
const void* gruwb_model_output(int index, size_t* bytes);

/* One inference. 0 on success, else the engine's status code (gruwb_model_error()). */
int gruwb_model_invoke(void);

/* Zeroes (or restores from the model) every variable tensor: recurrent state kept between
   invokes by stateful models. */
void gruwb_model_reset_state(void);

#if GRUWB_MODEL_TRAINING
/* The label of the next training sample: `count` floats (one-hot rows for categorical cross
   entropy, one class index per row for the sparse loss, targets for MSE/MAE). */
float* gruwb_model_label(size_t* count);

/* Trains on the sample in input 0 and the label: forward, loss, backward; the optimizer updates
   the weights in the arena after every GRUWB_MODEL_BATCH_SIZE samples. `loss` (may be NULL) gets
   the sample's loss. 0 on success, else the engine's status code. */
int gruwb_model_train_step(float* loss);
#endif

#ifdef __cplusplus
}
#endif

#endif /* GRUWB_MODEL_H */
