# The minimal gated unit's fused op, compiled into the engine's kernels (engine/cell_kernels.cmake).
gruwb_cell_kernel(GRUWB_MGU kMguKernel mgu_cell.cpp mgu_op.cpp)
