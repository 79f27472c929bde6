#!/usr/bin/env python3
"""Golden statistics for tensor_inspector_test: reads the kernel of
hello_world's FULLY_CONNECTED op 1 straight from the .tflite flatbuffer (a
minimal reader written here, independent of the engine's) and prints NumPy's
min/max/mean/std/sparsity.

    /usr/bin/python3 tests/views/gen_tensor_stats.py ../shared/data/models/tflite/tflm_hello_world_float.tflite
"""
import struct
import sys

import numpy as np


def u32(b, at):
    return struct.unpack_from("<I", b, at)[0]


def field(b, table, index):
    """Absolute position of field `index` of the table at `table`, or None."""
    vtable = table - struct.unpack_from("<i", b, table)[0]
    vsize = struct.unpack_from("<H", b, vtable)[0]
    slot = 4 + 2 * index
    if slot >= vsize:
        return None
    offset = struct.unpack_from("<H", b, vtable + slot)[0]
    return table + offset if offset else None


def ref(b, at):
    return at + u32(b, at)


def vector(b, table, index):
    at = field(b, table, index)
    if at is None:
        return 0, 0
    start = ref(b, at)
    return u32(b, start), start + 4


def table_at(b, table, index, i):
    count, start = vector(b, table, index)
    assert i < count
    return ref(b, start + 4 * i)


def main(path):
    b = open(path, "rb").read()
    model = u32(b, 0)
    subgraph = table_at(b, model, 2, 0)
    op = table_at(b, subgraph, 3, 1)
    _, inputs = vector(b, op, 1)
    tensor_index = struct.unpack_from("<i", b, inputs + 4)[0]
    tensor = table_at(b, subgraph, 0, tensor_index)
    buffer_index = u32(b, field(b, tensor, 2))
    buffer = table_at(b, model, 4, buffer_index)
    size, data = vector(b, buffer, 0)
    values = np.frombuffer(b[data:data + size], dtype="<f4").astype(np.float64)
    print("#define GOLDEN_MIN %r" % values.min())
    print("#define GOLDEN_MAX %r" % values.max())
    print("#define GOLDEN_MEAN %r" % values.mean())
    print("#define GOLDEN_STD %r" % values.std())
    print("#define GOLDEN_SPARSITY %r" % float(np.mean(values == 0)))
    print("// tensor %d, %d values" % (tensor_index, values.size))


if __name__ == "__main__":
    main(sys.argv[1])
