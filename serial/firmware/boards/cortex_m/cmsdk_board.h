#pragma once
// The boards of Arm's MPS2 family under QEMU (mps2-an386, -an500, -an505):
// a CMSDK APB UART (RX interrupt only to wake the CPU from WFI; QEMU's UART
// never overruns, research/qemu-mcu.md) and SysTick on the processor clock.
// Each board folder names its UART, RX IRQ and clock (CmsdkBoardConfig) and
// calls run_cmsdk_board from main().

#include <cstdint>

namespace gruwb::serial {

struct CmsdkBoardConfig {
  const char* name;      // HELLO's board name: "qemu-" + the QEMU machine
  uintptr_t uart;        // the UART QEMU connects to the first -serial
  unsigned uart_rx_irq;  // its RX interrupt
  uint32_t clock_hz;     // the processor clock (SysTick) and the UART's PCLK
};

[[noreturn]] void run_cmsdk_board(const CmsdkBoardConfig& config);
// The UART RX interrupt: acknowledges it (the main loop reads the byte).
void cmsdk_uart_rx_irq(uintptr_t uart);

}  // namespace gruwb::serial
