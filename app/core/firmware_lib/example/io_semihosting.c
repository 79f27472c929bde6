/* The example's output on a Cortex-M board: Arm semihosting (SYS_WRITE0, SYS_EXIT), which QEMU
   serves with -semihosting-config enable=on,target=native and a debugger (OpenOCD's
   `arm semihosting enable`) forwards. Without either, the BKPT faults: replace these two
   functions with the board's UART. */
#include <stdint.h>

#include "example/example_io.h"

static uintptr_t semihost(uintptr_t operation, uintptr_t argument) {
  register uintptr_t r0 __asm("r0") = operation;
  register uintptr_t r1 __asm("r1") = argument;
  __asm volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

void example_print(const char* text) { semihost(0x04, (uintptr_t)text); /* SYS_WRITE0 */ }

void example_exit(int status) {
  /* SYS_EXIT: ADP_Stopped_ApplicationExit (QEMU exits 0) or RunTimeErrorUnknown (exits 1). */
  semihost(0x18, status == 0 ? 0x20026u : 0x20023u);
  for (;;) {
  }
}

/* The shared start-up's vector table names it; the example uses no timer. */
void SysTick_Handler(void) {}
