#include "serial/firmware/boards/cortex_m/cortex_m_board.h"

#include <new>

#include "serial/firmware/device.h"

extern "C" uint8_t __pool_start[];
extern "C" uint8_t __pool_end[];

namespace gruwb::serial {
namespace {

constexpr uintptr_t kSysTickCsr = 0xE000E010, kSysTickRvr = 0xE000E014, kSysTickCvr = 0xE000E018;
constexpr uintptr_t kNvicIser = 0xE000E100, kAircr = 0xE000ED0C;

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
  gruwb::serial::g_systick_wraps = gruwb::serial::g_systick_wraps + 1;
}
