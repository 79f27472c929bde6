# CMake toolchain file: the portable engine for an Arm Cortex-M4F (STM32F4, nRF52, ...).
#   cmake -S . -B build-cortex-m4f -G Ninja -DCMAKE_TOOLCHAIN_FILE=engine/cortex-m4f.cmake \
#         -DGRUWB_ENGINE_ONLY=ON
#   ninja -C build-cortex-m4f gruwb_engine
# Boards: mps2_an386, nucleo_f446re (docs/firmware.md).

set(GRUWB_CPU cortex-m4f)
# Single-precision FPU (FPv4-SP); doubles are software.
set(GRUWB_MCU_FLAGS "-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16")
include(${CMAKE_CURRENT_LIST_DIR}/cortex-m.cmake)
