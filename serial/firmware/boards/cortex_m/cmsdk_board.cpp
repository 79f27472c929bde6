#include "serial/firmware/boards/cortex_m/cmsdk_board.h"

#include <new>

#include "serial/firmware/boards/cortex_m/cortex_m_board.h"

namespace gruwb::serial {
namespace {

struct CmsdkUart {
  volatile uint32_t data;
  volatile uint32_t state;  // bit0 TX full, bit1 RX full
  volatile uint32_t ctrl;   // bit0 TX en, bit1 RX en, bit3 RX interrupt
  volatile uint32_t intstatus;
  volatile uint32_t bauddiv;
};
constexpr uint32_t kTxFull = 1, kRxFull = 2;

class CmsdkBoard final : public CortexMBoard {
 public:
  explicit CmsdkBoard(const CmsdkBoardConfig& config)
      : CortexMBoard(config.name, config.clock_hz),
        uart_(reinterpret_cast<CmsdkUart*>(config.uart)) {
    uart_->bauddiv = config.clock_hz / 115200;  // QEMU ignores the rate but wants >= 16
    uart_->ctrl = 0x1 | 0x2 | 0x8;
    enable_irq(config.uart_rx_irq);
  }
  size_t uart_read(uint8_t* data, size_t capacity) override {
    size_t n = 0;
    while (n < capacity && (uart_->state & kRxFull)) data[n++] = static_cast<uint8_t>(uart_->data);
    return n;
  }
  void uart_write(const uint8_t* data, size_t size) override {
    for (size_t i = 0; i < size; ++i) {
      while (uart_->state & kTxFull) {
      }
      uart_->data = data[i];
    }
  }
  // Sleep until the UART or SysTick interrupts: the host CPU idles too.
  void idle() override {
    sleep_until_interrupt([this] { return (uart_->state & kRxFull) != 0; });
  }

 private:
  CmsdkUart* uart_;
};

}  // namespace

void cmsdk_uart_rx_irq(uintptr_t uart) { reinterpret_cast<CmsdkUart*>(uart)->intstatus = 2; }

void run_cmsdk_board(const CmsdkBoardConfig& config) {
  alignas(CmsdkBoard) static uint8_t storage[sizeof(CmsdkBoard)];
  run_device(*new (storage) CmsdkBoard(config));
}

}  // namespace gruwb::serial
