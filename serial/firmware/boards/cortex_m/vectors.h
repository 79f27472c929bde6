#pragma once
// A board's IRQ vectors: startup.cpp holds the 16 core vectors, the linker
// script puts the section ".isr_vector.irq" right after them. A board uses
// one IRQ (its UART's receive), so the table is that IRQ's handler with
// Default_Handler below it:
//   GRUWB_IRQ_VECTORS(38, Usart2_Handler);   // IRQ 38 = vector 54

#include <cstddef>

extern "C" void Default_Handler();

namespace gruwb::serial {

// What start-up writes into the unused stack (startup.cpp).
constexpr unsigned kStackPaint = 0xC5C5C5C5u;

using IrqHandler = void (*)();

template <size_t kCount>
struct IrqVectors {
  IrqHandler handlers[kCount];
};

template <size_t kCount>
constexpr IrqVectors<kCount> irq_vectors(size_t irq, IrqHandler handler) {
  IrqVectors<kCount> table{};
  for (size_t i = 0; i < kCount; ++i) table.handlers[i] = i == irq ? handler : &Default_Handler;
  return table;
}

}  // namespace gruwb::serial

// Constant-initialized (start-up runs no constructors) and kept by the linker.
#define GRUWB_IRQ_VECTORS(irq, handler)                                            \
  __attribute__((section(".isr_vector.irq"), used)) constexpr auto g_irq_vectors = \
      ::gruwb::serial::irq_vectors<(irq) + 1>(irq, handler)
