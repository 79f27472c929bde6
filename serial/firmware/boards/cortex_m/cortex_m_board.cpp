#include "serial/firmware/boards/cortex_m/cortex_m_board.h"

#include <new>

#include "serial/firmware/device.h"

extern "C" uint8_t __pool_start[];
extern "C" uint8_t __pool_end[];

namespace gruwb::serial {
namespace {

constexpr uintptr_t kSysTickCsr = 0xE000E010, kSysTickRvr = 0xE000E014, kSysTickCvr = 0xE000E018;
constexpr uintptr_t kNvicIser = 0xE000E100, kAircr = 0xE000ED0C;
// DEMCR.TRCENA powers the DWT; DWT_CTRL.NOCYCCNT says it has no cycle counter;
// the lock access register must be unlocked on some Cortex-M7 parts.
constexpr uintptr_t kDemcr = 0xE000EDFC, kDwtCtrl = 0xE0001000, kDwtCyccnt = 0xE0001004,
                    kDwtLar = 0xE0001FB0;

volatile uint32_t g_systick_wraps = 0;
// The DWT's 32-bit counter made 64-bit: SysTick (every 2^24 cycles) counts
// its wraps. 0 = no DWT counter, cycles come from SysTick.
volatile bool g_dwt = false;
volatile uint32_t g_dwt_high = 0, g_dwt_last = 0;

// Starts the DWT cycle counter; false when the core has none or it does not
// count (QEMU models no DWT: its registers read 0).
bool start_dwt_counter() {
  mmio(kDemcr) |= 1u << 24;
  mmio(kDwtLar) = 0xC5ACCE55;
  if (mmio(kDwtCtrl) & (1u << 25)) return false;
  mmio(kDwtCyccnt) = 0;
  mmio(kDwtCtrl) |= 1;
  const uint32_t before = mmio(kDwtCyccnt);
  for (volatile int i = 0; i < 16; ++i) {
  }
  return mmio(kDwtCyccnt) != before;
}

// Survives a software reset (not zeroed at start-up): tells a reboot the
// host asked for from a power-on, and varies the session id between boots.
struct NoInit {
  uint32_t magic;
  uint32_t boots;
};
__attribute__((section(".noinit"))) NoInit g_noinit;
constexpr uint32_t kSoftResetMagic = 0xB007C0DEu;

}  // namespace

void enable_irq(unsigned irq) { mmio(kNvicIser + 4 * (irq / 32)) = 1u << (irq % 32); }

CortexMBoard::CortexMBoard(const char* board_name, uint32_t clock_hz) : clock_hz_(clock_hz) {
  name = board_name;
  ram = __pool_start;
  ram_bytes = static_cast<size_t>(__pool_end - __pool_start);
  reset_reason_ = g_noinit.magic == kSoftResetMagic ? 1 : 0;
  if (reset_reason_ == 0) g_noinit.boots = 0;
  ++g_noinit.boots;
  g_noinit.magic = 0;
  mmio(kSysTickRvr) = 0xFFFFFF;
  mmio(kSysTickCvr) = 0;
  mmio(kSysTickCsr) = 7;  // processor clock, interrupt, enable
  if (start_dwt_counter()) {
    g_dwt = true;
    flags = kCyclesFromDwt;
  }
}

uint64_t CortexMBoard::cycles() {
  if (!g_dwt) return ticks();
  uint32_t high, last, now;
  do {  // re-read when SysTick counted a wrap between the reads
    high = g_dwt_high;
    last = g_dwt_last;
    now = mmio(kDwtCyccnt);
  } while (high != g_dwt_high);
  // A wrap SysTick has not seen yet shows as a count below its last reading.
  return (static_cast<uint64_t>(high + (now < last ? 1 : 0)) << 32) | now;
}

uint64_t CortexMBoard::ticks() {
  uint32_t wraps, value;
  do {  // re-read when the counter wrapped between the two reads
    wraps = g_systick_wraps;
    value = mmio(kSysTickCvr);
  } while (wraps != g_systick_wraps);
  return (static_cast<uint64_t>(wraps) << 24) + (0xFFFFFFu - value);
}

uint32_t CortexMBoard::entropy() {
  return g_noinit.boots * 0x6C078965u ^ static_cast<uint32_t>(ticks());
}

void CortexMBoard::reset() {
  for (volatile int i = 0; i < 20000; ++i) {
  }  // let the RESET reply leave the UART
  g_noinit.magic = kSoftResetMagic;
  mmio(kAircr) = 0x05FA0004;  // SYSRESETREQ
  for (;;) {
  }
}

void run_device(BoardSupport& board) {
  alignas(Device) static uint8_t storage[sizeof(Device)];
  auto* device = new (storage) Device(board);
  device->boot();
  for (;;) device->poll();
}

}  // namespace gruwb::serial

extern "C" void SysTick_Handler() {
  using namespace gruwb::serial;
  g_systick_wraps = g_systick_wraps + 1;
  if (g_dwt) {
    const uint32_t now = mmio(kDwtCyccnt);
    if (now < g_dwt_last) g_dwt_high = g_dwt_high + 1;
    g_dwt_last = now;
  }
}
