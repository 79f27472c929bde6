#pragma once
// What every Cortex-M board shares beyond start-up (startup.cpp): the RAM
// pool the linker script leaves, a 64-bit cycle clock (the DWT cycle counter
// where the core has one, else SysTick on the processor clock), the reset reason and a boot count
// kept in .noinit across a software reset, SYSRESETREQ, and the main loop. A board derives from
// CortexMBoard and adds its UART (uart_read, uart_write, idle) and clock set-up.

#include <cstddef>
#include <cstdint>

#include "serial/firmware/board_support.h"

namespace gruwb::serial {

inline volatile uint32_t& mmio(uintptr_t address) {
  return *reinterpret_cast<volatile uint32_t*>(address);
}

// NVIC: lets `irq` (0 = the first vector after SysTick) interrupt.
void enable_irq(unsigned irq);

class CortexMBoard : public BoardSupport {
 public:
  uint64_t clock_us() override { return cycles() / (clock_hz_ / 1000000); }
  uint64_t cycles() override;
  uint32_t clock_hz() override { return clock_hz_; }
  // 0: power-on (or any reset the host did not ask for); 1: the host's RESET.
  uint8_t reset_reason() override { return reset_reason_; }
  uint32_t entropy() override;
  // SYSRESETREQ, once the RESET reply has left the UART.
  void reset() override;

 protected:
  // `clock_hz`: the processor clock SysTick counts (a whole number of MHz).
  CortexMBoard(const char* board_name, uint32_t clock_hz);
  ~CortexMBoard() = default;
  uint64_t ticks();

 private:
  uint32_t clock_hz_;
  uint8_t reset_reason_ = 0;
};

// Builds the Device on `board` (static storage: start-up runs no C++
// constructors), announces the boot and serves the host for ever.
[[noreturn]] void run_device(BoardSupport& board);

// Sleeps until an interrupt unless `input_waiting()`; interrupts are masked
// across the check so a byte arriving just before WFI still wakes the CPU.
template <typename InputWaiting>
void sleep_until_interrupt(InputWaiting input_waiting) {
  __asm volatile("cpsid i" ::: "memory");
  if (!input_waiting()) __asm volatile("wfi" ::: "memory");
  __asm volatile("cpsie i" ::: "memory");
}

}  // namespace gruwb::serial
