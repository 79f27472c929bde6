# The FastGRNN cell's descriptor (host side), compiled into the host tools and registered after the
# built-in cells (engine/tools/cell_descriptors.cmake).
gruwb_cell_descriptor(fastgrnn_cell_descriptor host/fastgrnn_descriptor.cpp)
