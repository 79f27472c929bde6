// Start-up shared by every Cortex-M board: the 16 core exception vectors (the
// board's IRQ vectors follow them, vectors.h), reset (FPU on first, since gcc
// may use FP registers in main's prologue), .data copy, .bss zero, stack
// paint, main(). Fault handlers print nothing: they park the CPU where a
// debugger sees it.

#include <cstdint>
#include <cstring>

#include "serial/firmware/boards/cortex_m/vectors.h"

extern "C" {
extern uint32_t __stack_top[], __stack_limit[];
extern uint32_t __data_load[], __data_start[], __data_end[], __bss_start[], __bss_end[];
int main();
void SysTick_Handler();
void Reset_Handler();

// `used`: only Reset_Handler's assembly calls it, which link-time optimization
// cannot see.
__attribute__((used)) void start_c() {
  memcpy(__data_start, __data_load, (__data_end - __data_start) * sizeof(uint32_t));
  memset(__bss_start, 0, (__bss_end - __bss_start) * sizeof(uint32_t));
  // The stack reserve's high-water mark is the lowest word that lost this
  // pattern: read it with a debugger or QEMU's monitor when sizing a board's
  // stack (docs/firmware.md, "Porting to a new board"). Stops 256 bytes below
  // the stack pointer, which this frame uses.
  uint32_t* stack_pointer;
  __asm volatile("mov %0, sp" : "=r"(stack_pointer));
  uint32_t* const paint_end = stack_pointer - 64;
  for (uint32_t* word = __stack_limit; word < paint_end; ++word) *word = gruwb::serial::kStackPaint;
  main();
  for (;;) {
  }
}

__attribute__((naked)) void Reset_Handler() {
  __asm volatile(
      "ldr r0, =0xE000ED88\n"  // CPACR: CP10/CP11 full access
      "ldr r1, [r0]\n"
      "orr r1, r1, #(0xF << 20)\n"
      "str r1, [r0]\n"
      "dsb\n"
      "isb\n"
      "b start_c\n");
}

void Default_Handler() {
  for (;;) {
  }
}

// newlib's stubs (nosys) have an unbounded _sbrk; the engine never allocates,
// so any heap request is a bug: refuse it. `used`: newlib's objects that call
// it are linked after link-time optimization has run.
__attribute__((used)) void* _sbrk(int) { return reinterpret_cast<void*>(-1); }

// A pure virtual call cannot happen (every board overrides them); the default
// handler would drag in std::terminate and the unwinder.
void __cxa_pure_virtual() {
  for (;;) {
  }
}

// The board's IRQ vectors (section .isr_vector.irq) follow these in flash.
__attribute__((section(".isr_vector"), used)) void (*const g_core_vectors[16])() = {
    reinterpret_cast<void (*)()>(__stack_top),
    Reset_Handler,
    Default_Handler,  // NMI
    Default_Handler,  // HardFault
    Default_Handler,  // MemManage
    Default_Handler,  // BusFault
    Default_Handler,  // UsageFault
    Default_Handler,  // SecureFault (Armv8-M; reserved on v7-M)
    nullptr,
    nullptr,
    nullptr,
    Default_Handler,  // SVC
    Default_Handler,  // DebugMon
    nullptr,
    Default_Handler,  // PendSV
    SysTick_Handler,
};
}
