# Runs COMMAND (a ;-list) and checks its exit code equals EXPECT_EXIT and, if
# EXPECT_STDERR is set, that stderr contains it. ctest alone cannot check an
# exact non-zero exit code.
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE result ERROR_VARIABLE err OUTPUT_VARIABLE out)
if(NOT "${result}" STREQUAL "${EXPECT_EXIT}")
  message(FATAL_ERROR "exit '${result}', expected ${EXPECT_EXIT}\nstdout: ${out}\nstderr: ${err}")
endif()
if(EXPECT_STDERR)
  string(FIND "${err}" "${EXPECT_STDERR}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "stderr lacks '${EXPECT_STDERR}':\n${err}")
  endif()
endif()
message(STATUS "exit ${result} as expected")
