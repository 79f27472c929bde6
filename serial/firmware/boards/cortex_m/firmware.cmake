# The firmware image of the board GRUWB_BOARD names (serial/CMakeLists.txt): a board folder's
# CMakeLists.txt calls
#   gruwb_add_firmware(CPU cortex-m4f FLASH 0x08000000 512 RAM 0x20000000 128 STACK 16384
#                      QEMU -M netduinoplus2 -serial null -serial pty SOURCES board.cpp)
# CPU      the toolchain file the board needs (engine/<cpu>.cmake sets GRUWB_CPU)
# FLASH    origin and KB of flash; RAM: origin and KB of RAM; STACK: bytes reserved at its top
#          (-DGRUWB_FW_FLASH_KB, -DGRUWB_FW_RAM_KB, -DGRUWB_FW_STACK_BYTES override the sizes)
# QEMU     qemu-system-arm arguments that run the image with the board's UART on a new pty
#          (none: the board has no QEMU machine)
# SOURCES  the board's sources besides the shared start-up and CortexMBoard (cortex_m/)
# TOOLS    the programs `gruwb board flash` may write the image with (openocd, st-flash,
#          stm32flash; none: a QEMU-only machine); OPENOCD: openocd's -f config for the board
# It builds gruwb_fw_<board>.elf in the board's binary folder, its raw image
# gruwb_fw_<board>.bin (st-flash and stm32flash write it at the flash origin), its linker map
# (gruwb_fw_<board>.map, for flash_breakdown.py), the manifest gruwb_fw_<board>.json that
# `gruwb board flash` and `gruwb board fit` read (the facts above, and after each link what the
# map measured: flash used, the RAM pool, each kernel's flash), and, for QEMU boards, gruwb_fw_<board>.qemu: the
# QEMU arguments on one line (tests/serial/qemu_test.cpp and .ci/test.sh read it).

set(GRUWB_CORTEX_M_DIR ${CMAKE_CURRENT_LIST_DIR})
find_package(Python3 COMPONENTS Interpreter)

function(gruwb_add_firmware)
  cmake_parse_arguments(PARSE_ARGV 0 fw "" "CPU;STACK;OPENOCD" "FLASH;RAM;QEMU;SOURCES;TOOLS")
  set(board ${GRUWB_BOARD})
  if(NOT fw_CPU STREQUAL GRUWB_CPU)
    message(FATAL_ERROR "GRUWB_BOARD=${board} runs on a ${fw_CPU}: configure a new build folder with "
                        "-DCMAKE_TOOLCHAIN_FILE=engine/${fw_CPU}.cmake (this one uses "
                        "${CMAKE_TOOLCHAIN_FILE})")
  endif()
  list(GET fw_FLASH 0 flash_origin)
  list(GET fw_FLASH 1 flash_kb)
  list(GET fw_RAM 0 ram_origin)
  list(GET fw_RAM 1 ram_kb)
  set(stack_bytes ${fw_STACK})
  # An explicit -D overrides the board's size (e.g. to try a smaller part).
  foreach(pair flash_kb:GRUWB_FW_FLASH_KB ram_kb:GRUWB_FW_RAM_KB stack_bytes:GRUWB_FW_STACK_BYTES)
    string(REPLACE ":" ";" pair ${pair})
    list(GET pair 0 local)
    list(GET pair 1 override)
    if(NOT "${${override}}" STREQUAL "")
      set(${local} ${${override}})
    endif()
  endforeach()
  message(STATUS "Firmware gruwb_fw_${board}: ${fw_CPU}, flash ${flash_kb} KB at ${flash_origin}, "
                 "RAM ${ram_kb} KB at ${ram_origin}, stack ${stack_bytes} B")

  set(target gruwb_fw_${board})
  set(script ${CMAKE_CURRENT_BINARY_DIR}/${target}.ld)
  configure_file(${GRUWB_CORTEX_M_DIR}/link.ld.in ${script} @ONLY)
  add_executable(${target} ${fw_SOURCES} ${GRUWB_CORTEX_M_DIR}/startup.cpp
                 ${GRUWB_CORTEX_M_DIR}/cortex_m_board.cpp)
  set_target_properties(${target} PROPERTIES SUFFIX ".elf" LINK_DEPENDS ${script})
  target_link_libraries(${target} PRIVATE gruwb_board_core gruwb_protocol gruwb_engine m)
  target_compile_options(${target} PRIVATE ${GRUWB_WARNINGS} -fno-exceptions -fno-rtti)
  target_link_options(${target} PRIVATE -nostartfiles -T ${script} -Wl,--print-memory-usage
                      -Wl,-Map=${CMAKE_CURRENT_BINARY_DIR}/${target}.map)
  # The manifest: the board's facts (below, at configure) plus, after each link, what its map
  # measured (flash_breakdown.py --manifest); without Python only the facts.
  set(manifest_base ${CMAKE_CURRENT_BINARY_DIR}/${target}.manifest-base.json)
  set(manifest ${CMAKE_CURRENT_BINARY_DIR}/${target}.json)
  if(Python3_FOUND)
    set(write_manifest
        ${Python3_EXECUTABLE} ${GRUWB_CORTEX_M_DIR}/../flash_breakdown.py
        ${CMAKE_CURRENT_BINARY_DIR}/${target}.map --manifest ${manifest_base} ${manifest}
        --op-table ${GRUWB_OP_TABLE_SOURCE})
  else()
    set(write_manifest ${CMAKE_COMMAND} -E copy ${manifest_base} ${manifest})
  endif()
  add_custom_command(
    TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_SIZE} $<TARGET_FILE:${target}>
    COMMAND ${CMAKE_OBJCOPY} -O binary $<TARGET_FILE:${target}>
            ${CMAKE_CURRENT_BINARY_DIR}/${target}.bin
    COMMAND ${write_manifest})
  set(qemu_file ${CMAKE_CURRENT_BINARY_DIR}/${target}.qemu)
  if(fw_QEMU)
    list(JOIN fw_QEMU " " qemu_args)
    file(CONFIGURE OUTPUT ${qemu_file} CONTENT "${qemu_args}\n")
  else()
    file(REMOVE ${qemu_file})
  endif()
  # The manifest: JSON lists from CMake lists.
  foreach(list TOOLS QEMU)
    set(json_${list} "")
    foreach(item IN LISTS fw_${list})
      list(APPEND json_${list} "\"${item}\"")
    endforeach()
    list(JOIN json_${list} ", " json_${list})
  endforeach()
  file(CONFIGURE OUTPUT ${manifest_base} CONTENT "{
  \"board\": \"${board}\",
  \"cpu\": \"${fw_CPU}\",
  \"image\": \"${target}.elf\",
  \"binary\": \"${target}.bin\",
  \"flash_origin\": \"${flash_origin}\",
  \"flash_kb\": ${flash_kb},
  \"ram_origin\": \"${ram_origin}\",
  \"ram_kb\": ${ram_kb},
  \"tools\": [${json_TOOLS}],
  \"openocd_config\": \"${fw_OPENOCD}\",
  \"qemu\": [${json_QEMU}]
}
")
endfunction()
