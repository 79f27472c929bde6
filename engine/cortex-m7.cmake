# CMake toolchain file: the portable engine for an Arm Cortex-M7 with the double-precision FPU
# (STM32F7/H7, i.MX RT). Boards: mps2_an500 (docs/firmware.md).

set(GRUWB_CPU cortex-m7)
# FPv5 with doubles in hardware (fpv5-d16; an M7 with the single-precision FPU would use
# fpv5-sp-d16).
set(GRUWB_MCU_FLAGS "-mcpu=cortex-m7 -mthumb -mfloat-abi=hard -mfpu=fpv5-d16")
include(${CMAKE_CURRENT_LIST_DIR}/cortex-m.cmake)
