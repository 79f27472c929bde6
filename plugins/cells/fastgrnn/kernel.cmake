# The FastGRNN cell's fused op, compiled into the engine's kernels (engine/cell_kernels.cmake).
gruwb_cell_kernel(GRUWB_FASTGRNN kFastGrnnKernel fastgrnn_cell.cpp fastgrnn_op.cpp)
