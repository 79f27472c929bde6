# GRUWB_FIRMWARE_IMAGES: every board's firmware image, cross-built from these sources with the
# board's CPU toolchain file (the CPU its CMakeLists.txt names) and every kernel (GRUWB_FW_OPS
# all: an installed image runs any model the engine does), then copied with its raw .bin and
# .json manifest to GRUWB_BUILD_FIRMWARE_DIR/<board>/, where `gruwb board flash` run from the
# build tree finds it, and installed to GRUWB_INSTALL_FIRMWARE_DIR/<board>/ (the Debian package).
# Each board is an ExternalProject in <build>/firmware-build/<board>; ccache shares the engine
# objects of boards with the same CPU. The boards, in order, are the global property
# GRUWB_FIRMWARE_BOARDS (the package description names them).
find_program(GRUWB_ARM_GXX arm-none-eabi-g++)
if(NOT GRUWB_ARM_GXX)
  message(FATAL_ERROR "GRUWB_FIRMWARE_IMAGES needs arm-none-eabi-g++ (Debian: apt install "
                      "gcc-arm-none-eabi libstdc++-arm-none-eabi-newlib)")
endif()
include(ExternalProject)
set(boards_dir ${CMAKE_CURRENT_LIST_DIR}/boards)
file(GLOB board_lists RELATIVE ${boards_dir} ${boards_dir}/*/CMakeLists.txt)
foreach(list IN LISTS board_lists)
  get_filename_component(board ${list} DIRECTORY)
  file(READ ${boards_dir}/${list} text)
  if(NOT text MATCHES "CPU[ \t\n]+([a-z0-9-]+)")
    message(FATAL_ERROR "${boards_dir}/${list}: gruwb_add_firmware names no CPU")
  endif()
  set(cpu ${CMAKE_MATCH_1})
  # Boards of one CPU one after the other, so each later one finds the engine objects in ccache
  # (the same relative paths: firmware-build/<board> is equally deep for all).
  set(after "")
  if(previous_board_of_${cpu})
    set(after DEPENDS ${previous_board_of_${cpu}})
  endif()
  set(previous_board_of_${cpu} firmware_${board})
  set(out ${GRUWB_BUILD_FIRMWARE_DIR}/${board})
  set(image <BINARY_DIR>/serial/firmware/boards/${board}/gruwb_fw_${board})
  ExternalProject_Add(firmware_${board}
    SOURCE_DIR ${PROJECT_SOURCE_DIR}
    BINARY_DIR ${CMAKE_BINARY_DIR}/firmware-build/${board}
    CMAKE_ARGS -DCMAKE_TOOLCHAIN_FILE=${PROJECT_SOURCE_DIR}/engine/${cpu}.cmake
               -DCMAKE_BUILD_TYPE=MinSizeRel -DGRUWB_ENGINE_ONLY=ON -DGRUWB_FIRMWARE=ON
               -DGRUWB_BOARD=${board} -DGRUWB_FW_OPS=all
    ${after}
    # One job each: ninja counts a board's build as one of its -j jobs, so -j2 runs two boards,
    # or a board beside the host build, never more than two compilers.
    BUILD_COMMAND ${CMAKE_COMMAND} --build <BINARY_DIR> -j 1 --target gruwb_fw_${board}
    INSTALL_COMMAND ${CMAKE_COMMAND} -E make_directory ${out}
    COMMAND ${CMAKE_COMMAND} -E copy_if_different ${image}.elf ${image}.bin ${image}.json ${out}
    BUILD_ALWAYS ON)
  install(DIRECTORY ${out} DESTINATION ${GRUWB_INSTALL_FIRMWARE_DIR})
  set_property(GLOBAL APPEND PROPERTY GRUWB_FIRMWARE_BOARDS ${board})
endforeach()
