// ST NUCLEO-F446RE (STM32F446RE), and QEMU's netduinoplus2 (STM32F405) with
// the same image. Registers from ST's RM0390 (F446) / RM0090 (F405), which
// agree on everything used here:
//   clock   HSE 8 MHz from the ST-LINK's MCO (bypass) or the 16 MHz HSI,
//           PLL to 168 MHz (VCO 336 MHz, 48 MHz on Q for USB), APB1 42 MHz;
//           every wait is bounded and a failing step falls back to the HSI.
//   UART    USART2 on PA2 (TX) / PA3 (RX), alternate function 7, 115200 8N1,
//           received by its interrupt (IRQ 38) into a 4 KB ring: a real UART
//           overruns when training keeps the main loop busy for a few ms.
// QEMU models no RCC, flash interface, PWR or GPIO (they read 0 and ignore
// writes): there the clock start-up times out to the HSI path and the board
// runs at QEMU's fixed 168 MHz SYSCLK. The HSI's ready bit, which silicon sets
// from reset on, tells the two apart and the board names itself after where
// it runs ("nucleo-f446re" or "qemu-netduinoplus2").

#include <cstddef>
#include <cstdint>
#include <new>

#include "serial/firmware/boards/cortex_m/cortex_m_board.h"
#include "serial/firmware/boards/cortex_m/vectors.h"

namespace gruwb::serial {
namespace {

// RCC
constexpr uintptr_t kRcc = 0x40023800;
constexpr uintptr_t kRccCr = kRcc + 0x00, kRccPllcfgr = kRcc + 0x04, kRccCfgr = kRcc + 0x08;
constexpr uintptr_t kRccAhb1enr = kRcc + 0x30, kRccApb1enr = kRcc + 0x40;
constexpr uint32_t kHsiRdy = 1u << 1, kHseOn = 1u << 16, kHseRdy = 1u << 17, kHseByp = 1u << 18;
constexpr uint32_t kPllOn = 1u << 24, kPllRdy = 1u << 25;
constexpr uint32_t kPllSrcHse = 1u << 22;
constexpr uint32_t kSwPll = 2, kSwsPll = 2u << 2, kSwsMask = 3u << 2;
constexpr uint32_t kPpre1Div4 = 5u << 10, kPpre2Div2 = 4u << 13;
constexpr uint32_t kGpioaEn = 1u << 0, kUsart2En = 1u << 17, kPwrEn = 1u << 28;
// PWR: regulator scale 1, needed above 144 MHz.
constexpr uintptr_t kPwrCr = 0x40007000;
constexpr uint32_t kVosScale1 = 3u << 14;
// Flash: 5 wait states at 150-180 MHz and 2.7-3.6 V, prefetch and caches on.
constexpr uintptr_t kFlashAcr = 0x40023C00;
constexpr uint32_t kFlashLatency5 = 5, kFlashPrefetchCaches = 7u << 8;
// GPIOA
constexpr uintptr_t kGpioa = 0x40020000;
constexpr uintptr_t kGpioaModer = kGpioa + 0x00, kGpioaOspeedr = kGpioa + 0x08;
constexpr uintptr_t kGpioaPupdr = kGpioa + 0x0C, kGpioaAfrl = kGpioa + 0x20;

struct Usart {
  volatile uint32_t sr;
  volatile uint32_t dr;
  volatile uint32_t brr;
  volatile uint32_t cr1;
  volatile uint32_t cr2;
  volatile uint32_t cr3;
};
Usart* const kUsart2 = reinterpret_cast<Usart*>(0x40004400);
constexpr unsigned kUsart2Irq = 38;
constexpr uint32_t kOre = 1u << 3, kRxne = 1u << 5, kTc = 1u << 6, kTxe = 1u << 7;
constexpr uint32_t kRe = 1u << 2, kTe = 1u << 3, kRxneie = 1u << 5, kUe = 1u << 13;
constexpr uint32_t kBaud = 115200;

constexpr uint32_t kHsiHz = 16000000, kHseHz = 8000000, kPllHz = 168000000;
// QEMU's netduinoplus2 runs the CPU and SysTick at a fixed 168 MHz.
constexpr uint32_t kQemuSysclkHz = 168000000;
// Each wait polls at most this often: about 100 ms at 16 MHz (a crystal HSE
// may take a few ms, the PLL locks in ~0.1 ms).
constexpr uint32_t kMaxPolls = 200000;

// A peripheral may be accessed two bus cycles after its clock is enabled:
// reading the enable register back waits that long (RM0390 6.3.10).
void enable_clock(uintptr_t enable_register, uint32_t bit) {
  mmio(enable_register) |= bit;
  const uint32_t enabled = mmio(enable_register);  // a volatile read: the delay
  (void)enabled;
}

bool wait_for(uintptr_t address, uint32_t mask, uint32_t value) {
  for (uint32_t i = 0; i < kMaxPolls; ++i)
    if ((mmio(address) & mask) == value) return true;
  return false;
}

struct Clocks {
  uint32_t sysclk_hz;
  uint32_t pclk1_hz;  // USART2's clock
};

// HSE bypass -> PLL -> 168 MHz; without the HSE the PLL runs from the HSI;
// without the PLL the CPU stays on the HSI (16 MHz), where reset left it.
Clocks start_clocks() {
  enable_clock(kRccApb1enr, kPwrEn);
  mmio(kPwrCr) = (mmio(kPwrCr) & ~(3u << 14)) | kVosScale1;
  mmio(kRccCr) |= kHseByp | kHseOn;
  const bool hse = wait_for(kRccCr, kHseRdy, kHseRdy);
  if (!hse) mmio(kRccCr) &= ~(kHseOn | kHseByp);
  const uint32_t source_mhz = (hse ? kHseHz : kHsiHz) / 1000000;
  // M: 2 MHz into the VCO; N = 168: VCO 336 MHz; P = 2: 168 MHz; Q = 7: 48 MHz; R = 2.
  mmio(kRccPllcfgr) = (source_mhz / 2) | (168u << 6) | (0u << 16) | (hse ? kPllSrcHse : 0) |
                      (7u << 24) | (2u << 28);
  mmio(kRccCr) |= kPllOn;
  if (!wait_for(kRccCr, kPllRdy, kPllRdy)) return {kHsiHz, kHsiHz};
  mmio(kFlashAcr) = kFlashLatency5 | kFlashPrefetchCaches;
  if ((mmio(kFlashAcr) & 0xF) != kFlashLatency5) return {kHsiHz, kHsiHz};
  mmio(kRccCfgr) = kPpre1Div4 | kPpre2Div2 | kSwPll;
  if (!wait_for(kRccCfgr, kSwsMask, kSwsPll)) {
    mmio(kRccCfgr) = 0;  // back to the HSI, prescalers 1
    return {kHsiHz, kHsiHz};
  }
  return {kPllHz, kPllHz / 4};
}

// Received bytes, filled by the USART2 interrupt, drained by uart_read.
struct RxRing {
  static constexpr uint32_t kSize = 4096;  // power of two
  uint8_t bytes[kSize];
  volatile uint32_t head;  // written by the interrupt
  volatile uint32_t tail;  // written by the main loop
  volatile uint32_t dropped;
};
RxRing g_rx;

}  // namespace

class NucleoBoard final : public CortexMBoard {
 public:
  NucleoBoard(bool emulated, const Clocks& clocks)
      : CortexMBoard(emulated ? "qemu-netduinoplus2" : "nucleo-f446re",
                     emulated ? kQemuSysclkHz : clocks.sysclk_hz) {
    enable_clock(kRccAhb1enr, kGpioaEn);
    enable_clock(kRccApb1enr, kUsart2En);
    // PA2, PA3: alternate function 7 (USART2), high speed, pull-up on RX.
    mmio(kGpioaModer) = (mmio(kGpioaModer) & ~(0xFu << 4)) | (0xAu << 4);
    mmio(kGpioaOspeedr) |= 0xFu << 4;
    mmio(kGpioaPupdr) = (mmio(kGpioaPupdr) & ~(0xFu << 4)) | (0x4u << 4);
    mmio(kGpioaAfrl) = (mmio(kGpioaAfrl) & ~(0xFFu << 8)) | (0x77u << 8);
    kUsart2->brr = (clocks.pclk1_hz + kBaud / 2) / kBaud;  // 16x oversampling
    kUsart2->cr1 = kUe | kTe | kRe | kRxneie;
    enable_irq(kUsart2Irq);
  }
  size_t uart_read(uint8_t* data, size_t capacity) override {
    size_t n = 0;
    uint32_t tail = g_rx.tail;
    while (n < capacity && tail != g_rx.head) data[n++] = g_rx.bytes[tail++ % RxRing::kSize];
    g_rx.tail = tail;
    return n;
  }
  void uart_write(const uint8_t* data, size_t size) override {
    for (size_t i = 0; i < size; ++i) {
      while (!(kUsart2->sr & kTxe)) {
      }
      kUsart2->dr = data[i];
    }
  }
  void idle() override {
    sleep_until_interrupt([] { return g_rx.tail != g_rx.head; });
  }
  void reset() override {
    // The RESET reply must leave the wire first (bounded: QEMU sets TC at once).
    for (uint32_t i = 0; i < kMaxPolls && !(kUsart2->sr & kTc); ++i) {
    }
    CortexMBoard::reset();
  }
};

}  // namespace gruwb::serial

extern "C" void Usart2_Handler() {
  using gruwb::serial::g_rx;
  using gruwb::serial::RxRing;
  const uint32_t status = gruwb::serial::kUsart2->sr;
  if (!(status & (gruwb::serial::kRxne | gruwb::serial::kOre))) return;
  // Reading SR then DR clears RXNE and an overrun (ORE) alike. A lost byte
  // fails its frame's CRC and the host sends the frame again.
  const uint8_t byte = static_cast<uint8_t>(gruwb::serial::kUsart2->dr);
  if (status & gruwb::serial::kOre) g_rx.dropped = g_rx.dropped + 1;
  const uint32_t head = g_rx.head;
  if (head - g_rx.tail == RxRing::kSize) {
    g_rx.dropped = g_rx.dropped + 1;
    return;
  }
  g_rx.bytes[head % RxRing::kSize] = byte;
  g_rx.head = head + 1;
}
GRUWB_IRQ_VECTORS(gruwb::serial::kUsart2Irq, Usart2_Handler);

int main() {
  using namespace gruwb::serial;
  // Silicon starts on the HSI with its ready bit set; QEMU's RCC reads 0.
  const bool emulated = !(mmio(kRccCr) & kHsiRdy);
  const Clocks clocks = start_clocks();
  alignas(NucleoBoard) static uint8_t storage[sizeof(NucleoBoard)];
  run_device(*new (storage) NucleoBoard(emulated, clocks));
}
