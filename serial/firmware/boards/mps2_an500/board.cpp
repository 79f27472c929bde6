// QEMU's mps2-an500: Arm's MPS2 FPGA board with the AN500 image, a Cortex-M7
// (FPv5, doubles in hardware) at 25 MHz; peripherals as on the AN386: UART0
// (CMSDK) at 0x40004000 with RX on IRQ 0 (QEMU hw/arm/mps2.c).

#include "serial/firmware/boards/cortex_m/cmsdk_board.h"
#include "serial/firmware/boards/cortex_m/vectors.h"

namespace {
constexpr gruwb::serial::CmsdkBoardConfig kBoard{"qemu-mps2-an500", 0x40004000, 0, 25000000};
}

extern "C" void Uart0Rx_Handler() { gruwb::serial::cmsdk_uart_rx_irq(kBoard.uart); }
GRUWB_IRQ_VECTORS(kBoard.uart_rx_irq, Uart0Rx_Handler);

int main() { gruwb::serial::run_cmsdk_board(kBoard); }
