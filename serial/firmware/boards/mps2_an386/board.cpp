// Board support for QEMU's mps2-an386 (Cortex-M4F, CMSDK APB UART0, SysTick
// at 25 MHz), per ../shared/research/qemu-mcu.md. A real STM32/nRF board
// replaces this one file (UART, clock, reset reason, reset) and the linker
// script's sizes.

#include <cstddef>
#include <cstdint>
#include <new>

#include "serial/firmware/board_support.h"
#include "serial/firmware/device.h"

namespace {

constexpr uint32_t kSysclkHz = 25000000;

struct CmsdkUart {
  volatile uint32_t data;
  volatile uint32_t state;  // bit0 TX full, bit1 RX full
  volatile uint32_t ctrl;   // bit0 TX en, bit1 RX en, bit3 RX interrupt
  volatile uint32_t intstatus;
  volatile uint32_t bauddiv;
};
CmsdkUart* const kUart0 = reinterpret_cast<CmsdkUart*>(0x40004000);

volatile uint32_t& reg(uintptr_t address) { return *reinterpret_cast<volatile uint32_t*>(address); }
constexpr uintptr_t kSysTickCsr = 0xE000E010, kSysTickRvr = 0xE000E014, kSysTickCvr = 0xE000E018;
constexpr uintptr_t kNvicIser0 = 0xE000E100, kAircr = 0xE000ED0C;

volatile uint32_t g_systick_wraps = 0;

// Survives a software reset (not zeroed at start-up): tells a reboot the
// host asked for from a power-on, and varies the session id between boots.
struct NoInit {
  uint32_t magic;
  uint32_t boots;
};
__attribute__((section(".noinit"))) NoInit g_noinit;
constexpr uint32_t kSoftResetMagic = 0xB007C0DEu;

}  // namespace

extern "C" uint8_t __pool_start[];
extern "C" uint8_t __pool_end[];

extern "C" void SysTick_Handler() { g_systick_wraps = g_systick_wraps + 1; }
extern "C" void Uart0Rx_Handler() { kUart0->intstatus = 2; }  // wake-up only; main loop reads

namespace gruwb::serial {

class Mps2Board final : public BoardSupport {
 public:
  Mps2Board() {
    name = "qemu-mps2-an386";
    ram = __pool_start;
    ram_bytes = static_cast<size_t>(__pool_end - __pool_start);
    reason_ = g_noinit.magic == kSoftResetMagic ? 1 : 0;
    if (reason_ == 0) g_noinit.boots = 0;
    ++g_noinit.boots;
    g_noinit.magic = 0;
    kUart0->bauddiv = kSysclkHz / 115200;
    kUart0->ctrl = 0x1 | 0x2 | 0x8;
    reg(kNvicIser0) = 1;  // UART0 RX = IRQ 0
    reg(kSysTickRvr) = 0xFFFFFF;
    reg(kSysTickCvr) = 0;
    reg(kSysTickCsr) = 7;  // processor clock, interrupt, enable
  }
  size_t uart_read(uint8_t* data, size_t capacity) override {
    size_t n = 0;
    while (n < capacity && (kUart0->state & 2)) data[n++] = static_cast<uint8_t>(kUart0->data);
    return n;
  }
  void uart_write(const uint8_t* data, size_t size) override {
    for (size_t i = 0; i < size; ++i) {
      while (kUart0->state & 1) {
      }
      kUart0->data = data[i];
    }
  }
  uint64_t ticks() {
    uint32_t wraps, value;
    do {  // re-read when the counter wrapped between the two reads
      wraps = g_systick_wraps;
      value = reg(kSysTickCvr);
    } while (wraps != g_systick_wraps);
    return (static_cast<uint64_t>(wraps) << 24) + (0xFFFFFFu - value);
  }
  uint64_t clock_us() override { return ticks() / (kSysclkHz / 1000000); }
  uint32_t clock_hz() override { return kSysclkHz; }
  uint8_t reset_reason() override { return reason_; }
  uint32_t entropy() override {
    return g_noinit.boots * 0x6C078965u ^ static_cast<uint32_t>(ticks());
  }
  void reset() override {
    for (volatile int i = 0; i < 20000; ++i) {
    }  // let the RESET reply leave the UART
    g_noinit.magic = kSoftResetMagic;
    reg(kAircr) = 0x05FA0004;  // SYSRESETREQ
    for (;;) {
    }
  }
  void idle() override {
    // Sleep until the UART or SysTick interrupts: the host CPU idles too.
    __asm volatile("cpsid i" ::: "memory");
    if (!(kUart0->state & 2)) __asm volatile("wfi" ::: "memory");
    __asm volatile("cpsie i" ::: "memory");
  }

 private:
  uint8_t reason_ = 0;
};

}  // namespace gruwb::serial

// Static storage, constructed in main(): start-up runs no C++ constructors.
alignas(gruwb::serial::Mps2Board) static uint8_t g_board_storage[sizeof(gruwb::serial::Mps2Board)];
alignas(gruwb::serial::Device) static uint8_t g_device_storage[sizeof(gruwb::serial::Device)];

int main() {
  auto* board = new (g_board_storage) gruwb::serial::Mps2Board();
  auto* device = new (g_device_storage) gruwb::serial::Device(*board);
  device->boot();
  for (;;) device->poll();
}
