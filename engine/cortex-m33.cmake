# CMake toolchain file: the portable engine for an Arm Cortex-M33 (Armv8-M Mainline with the DSP
# extension and FPU: nRF5340, STM32U5, LPC55). Boards: mps2_an505 (docs/firmware.md).

set(GRUWB_CPU cortex-m33)
# Single-precision FPv5; the firmware runs in the Secure state and does not use TrustZone.
set(GRUWB_MCU_FLAGS "-mcpu=cortex-m33 -mthumb -mfloat-abi=hard -mfpu=fpv5-sp-d16")
include(${CMAKE_CURRENT_LIST_DIR}/cortex-m.cmake)
