# What every Cortex-M toolchain file shares (cortex-m4f.cmake, cortex-m7.cmake, cortex-m33.cmake):
# each sets GRUWB_CPU (the name boards check, serial/firmware/boards/<board>/CMakeLists.txt) and
# GRUWB_MCU_FLAGS, then includes this file.
# Needs Debian's gcc-arm-none-eabi, libnewlib-arm-none-eabi and libstdc++-arm-none-eabi-newlib.

if(NOT GRUWB_CPU OR NOT GRUWB_MCU_FLAGS)
  message(FATAL_ERROR "cortex-m.cmake is included by a CPU's toolchain file (engine/cortex-m4f.cmake, ...)")
endif()

set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)

set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
set(CMAKE_AR arm-none-eabi-ar CACHE FILEPATH "")
set(CMAKE_RANLIB arm-none-eabi-ranlib CACHE FILEPATH "")
set(CMAKE_SIZE arm-none-eabi-size CACHE FILEPATH "")

# There is no OS to link a test executable against, so compiler checks build a static library.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

# The flags of the MCU the firmware runs on. Exceptions and RTTI are off for every target, so any
# engine code that needs them fails to compile here rather than on the board.
set(CMAKE_C_FLAGS_INIT "${GRUWB_MCU_FLAGS} -ffunction-sections -fdata-sections")
set(CMAKE_CXX_FLAGS_INIT
    "${GRUWB_MCU_FLAGS} -ffunction-sections -fdata-sections -fno-exceptions -fno-rtti -fno-threadsafe-statics")
set(CMAKE_ASM_FLAGS_INIT "${GRUWB_MCU_FLAGS}")
# newlib-nano keeps printf and friends small when a firmware links the engine.
set(CMAKE_EXE_LINKER_FLAGS_INIT "--specs=nano.specs --specs=nosys.specs -Wl,--gc-sections")

# Size first, in every build type: the firmware has to fit in flash. Cache entries, because CMake
# appends its own -O2/-O3 to the *_INIT values and the last -O wins.
foreach(lang C CXX)
  set(CMAKE_${lang}_FLAGS_RELEASE "-Os -DNDEBUG" CACHE STRING "")
  set(CMAKE_${lang}_FLAGS_MINSIZEREL "-Os -DNDEBUG" CACHE STRING "")
  set(CMAKE_${lang}_FLAGS_RELWITHDEBINFO "-Os -g -DNDEBUG" CACHE STRING "")
  set(CMAKE_${lang}_FLAGS_DEBUG "-Os -g" CACHE STRING "")
endforeach()

# Host programs (flatc) come from the host; libraries only from the target. Headers may come from
# the host because the engine's CMakeLists exposes only the header-only flatbuffers/ folder of
# /usr/include (through a shim directory), never /usr/include itself.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# The Generic platform searches no system prefixes, so name where Debian's header-only flatbuffers
# lives (libflatbuffers-dev).
list(APPEND CMAKE_INCLUDE_PATH /usr/include)
