/* Where the example prints: stdio on a host (io_host.c), semihosting on a board
   (io_semihosting.c: QEMU with -semihosting, or a debugger that serves it). */
#ifndef GRUWB_EXAMPLE_IO_H
#define GRUWB_EXAMPLE_IO_H

#ifdef __cplusplus
extern "C" {
#endif

void example_print(const char* text);
void example_exit(int status);

#ifdef __cplusplus
}
#endif

#endif
