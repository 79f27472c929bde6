/* The example's output on a host: stdout and exit(). */
#include <stdio.h>
#include <stdlib.h>

#include "example/example_io.h"

void example_print(const char* text) { fputs(text, stdout); }

void example_exit(int status) {
  fflush(stdout);
  exit(status);
}
