// The C API of an exported model (gruwb_model.h) over the engine's Interpreter, or its Trainer
// when training is exported. Static storage only: function-local statics, because a board's
// start-up may run no C++ constructors.

#include "gruwb_model.h"

#include <cstring>

#include "engine/runtime/interpreter.h"
#include "model_data.h"
#if GRUWB_MODEL_TRAINING
#include "engine/train/trainer.h"
#endif

namespace {

struct Library {
  gruwb::Model model;
  bool loaded = false;
  bool ready = false;
  bool planned = false;  // prepare got far enough to know the arena's size
  gruwb::Status last;
#if GRUWB_MODEL_TRAINING
  gruwb::Trainer trainer;
  gruwb::Interpreter& interpreter() { return trainer.interpreter(); }
#else
  gruwb::Interpreter runner;
  gruwb::Interpreter& interpreter() { return runner; }
#endif
};

Library& library() {
  static Library instance;
  return instance;
}

int fail(const gruwb::Status& status) {
  library().last = status;
  return status.ok() ? 0 : static_cast<int>(status.code());
}

#if GRUWB_MODEL_TRAINING
gruwb::TrainingConfig training_config() {
  gruwb::TrainingConfig config;
  config.loss = static_cast<gruwb::Loss>(GRUWB_MODEL_LOSS);
  config.optimizer = static_cast<gruwb::Optimizer>(GRUWB_MODEL_OPTIMIZER);
  config.learning_rate = GRUWB_MODEL_LEARNING_RATE;
  config.momentum = GRUWB_MODEL_MOMENTUM;
  config.batch_size = GRUWB_MODEL_BATCH_SIZE;
  gruwb::parse_trainable_scope(GRUWB_MODEL_TRAINABLE_SCOPE, &config);
  return config;
}
#endif

}  // namespace

extern "C" {

int gruwb_model_init(void* arena, size_t arena_bytes) {
  Library& lib = library();
  lib.ready = false;
  lib.planned = false;
  if (!lib.loaded) {
    gruwb::Status s = gruwb::Model::load(GRUWB_MODEL_ARRAY, GRUWB_MODEL_ARRAY_LEN, &lib.model);
    if (!s.ok()) return fail(s);
    lib.loaded = true;
  }
  if (reinterpret_cast<uintptr_t>(arena) % gruwb::Interpreter::kAlignment != 0) {
    return fail(gruwb::Status::error(gruwb::StatusCode::kInvalidArgument,
                                     "the arena must be %u-byte aligned",
                                     static_cast<unsigned>(gruwb::Interpreter::kAlignment)));
  }
  uint8_t* memory = static_cast<uint8_t*>(arena);
#if GRUWB_MODEL_TRAINING
  gruwb::Status s = lib.trainer.prepare(lib.model, training_config(), memory, arena_bytes);
  lib.planned = s.ok() || lib.trainer.arena_bytes_needed() > 0;
#else
  gruwb::Status s = lib.runner.prepare(lib.model, memory, arena_bytes);
  lib.planned = s.ok() || lib.runner.arena_bytes_needed() > 0;
#endif
  lib.ready = s.ok();
  return fail(s);
}

size_t gruwb_model_arena_bytes(void) {
  Library& lib = library();
  if (!lib.planned) return GRUWB_MODEL_ARENA_BYTES;
#if GRUWB_MODEL_TRAINING
  return lib.trainer.arena_bytes_needed();
#else
  return lib.runner.arena_bytes_needed();
#endif
}

const char* gruwb_model_error(void) { return library().last.message(); }

int gruwb_model_input_count(void) {
  return library().ready ? library().interpreter().input_count() : 0;
}

int gruwb_model_output_count(void) {
  return library().ready ? library().interpreter().output_count() : 0;
}

void* gruwb_model_input(int index, size_t* bytes) {
  if (index < 0 || index >= gruwb_model_input_count()) return nullptr;
  gruwb::Tensor* t = library().interpreter().input(index);
  if (bytes) *bytes = t->bytes;
  return t->data;
}

const void* gruwb_model_output(int index, size_t* bytes) {
  if (index < 0 || index >= gruwb_model_output_count()) return nullptr;
  gruwb::Tensor* t = library().interpreter().output(index);
  if (bytes) *bytes = t->bytes;
  return t->data;
}

int gruwb_model_invoke(void) {
  Library& lib = library();
  if (!lib.ready) {
    return fail(gruwb::Status::error(gruwb::StatusCode::kInvalidArgument,
                                     "gruwb_model_init has not succeeded"));
  }
  return fail(lib.interpreter().invoke());
}

void gruwb_model_reset_state(void) {
  if (library().ready) library().interpreter().reset_variables();
}

#if GRUWB_MODEL_TRAINING
float* gruwb_model_label(size_t* count) {
  Library& lib = library();
  if (!lib.ready) return nullptr;
  if (count) *count = static_cast<size_t>(lib.trainer.label_count());
  return lib.trainer.label();
}

int gruwb_model_train_step(float* loss) {
  Library& lib = library();
  if (!lib.ready) {
    return fail(gruwb::Status::error(gruwb::StatusCode::kInvalidArgument,
                                     "gruwb_model_init has not succeeded"));
  }
  return fail(lib.trainer.train_sample(loss));
}
#endif

}  // extern "C"
