// QEMU's mps2-an505: Arm's MPS2 FPGA board with the AN505 image (IoT Kit), a
// Cortex-M33 (FPv5-SP) at 20 MHz. UART0 (CMSDK) is at 0x40200000, seen by the
// Secure state at its alias 0x50200000; its RX interrupt is the IoT Kit's
// expansion IRQ 0 = NVIC IRQ 32 (QEMU hw/arm/mps2-tz.c). After reset
// everything (NVIC targets, the MPCs and PPCs guarding RAM and the UART) is
// Secure, which is where this firmware stays.

#include "serial/firmware/boards/cortex_m/cmsdk_board.h"
#include "serial/firmware/boards/cortex_m/vectors.h"

namespace {
constexpr gruwb::serial::CmsdkBoardConfig kBoard{"qemu-mps2-an505", 0x50200000, 32, 20000000};
}

extern "C" void Uart0Rx_Handler() { gruwb::serial::cmsdk_uart_rx_irq(kBoard.uart); }
GRUWB_IRQ_VECTORS(kBoard.uart_rx_irq, Uart0Rx_Handler);

int main() { gruwb::serial::run_cmsdk_board(kBoard); }
