#!/usr/bin/env python3
"""Seed inputs for tests/fuzz/device_fuzz.cpp: whole board sessions as the host would send them.

Each seed is a list of records {type:u8, sequence:u16, length:u16, payload} (the fuzzer frames
them). Usage: make_device_seeds.py OUT_DIR SMALL_MODEL.tflite [GRU_MODEL.tflite]
  SMALL_MODEL: [1, 1] float in and out (tflm_hello_world_float), trained with MSE;
  GRU_MODEL:   [1, 60, 3] in, 4 classes out (gesture_gru_fused), trained with cross entropy.
The message layouts are those of docs/serial-protocol.md.
"""
import hashlib
import os
import struct
import sys

HELLO, STATUS, BEGIN, CHUNK, CONFIGURE, START, PAUSE, STOP, DOWNLOAD, RESET, BENCH, EVENTS = range(1, 13)
CHUNK_BYTES = 1019  # max payload 1024 less the chunk header


class Session:
    def __init__(self):
        self.records = b""
        self.sequence = 100

    def send(self, kind, payload=b""):
        self.sequence += 1
        self.records += struct.pack("<BHH", kind, self.sequence, len(payload)) + payload

    def upload(self, kind, data):
        self.send(BEGIN, struct.pack("<BI", kind, len(data)) + hashlib.sha256(data).digest())
        for offset in range(0, len(data), CHUNK_BYTES):
            self.send(CHUNK, struct.pack("<BI", kind, offset) + data[offset:offset + CHUNK_BYTES])


def dataset(samples, elements, classes):
    blob = struct.pack("<5I", 0x53445747, 1, samples, elements, classes)
    for i in range(samples):
        blob += struct.pack("<%df" % elements, *[((i * 7 + k) % 13) / 13.0 - 0.5 for k in range(elements)])
        blob += struct.pack("<I", i % classes)
    return blob


def settings(loss, optimizer, batch, epochs, metric_every):
    return (struct.pack("<BB5fBifBiIIBII", loss, optimizer, 0.01, 0.9, 0.9, 0.999, 1e-7, 0, batch,
                        0.0, 0, 1, epochs, 7, 1, metric_every, 0) + struct.pack("<i", -1))


def training_session(model, data, config):
    s = Session()
    s.send(HELLO)
    s.upload(1, model)
    s.upload(2, data)
    s.send(CONFIGURE, config)
    s.send(START)
    s.send(STATUS)
    s.send(PAUSE)
    s.send(DOWNLOAD, struct.pack("<BIH", 2, 0, 0))
    s.send(DOWNLOAD, struct.pack("<BIH", 2, 1016, 64))
    s.send(START)
    s.send(EVENTS, struct.pack("<H", 1))
    s.send(STOP)
    s.send(DOWNLOAD, struct.pack("<BIH", 0, 0, 0))
    s.send(DOWNLOAD, struct.pack("<BIH", 1, 0, 100))
    s.send(BENCH, struct.pack("<II", 2, 1))
    s.send(RESET)
    s.send(STATUS)
    return s.records


def main():
    out, small = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    seeds = {}
    s = Session()
    for kind in (HELLO, STATUS, EVENTS, START, PAUSE, STOP, BENCH, 0x42):
        s.send(kind)
    s.send(DOWNLOAD, struct.pack("<BIH", 1, 0, 0))
    s.records += struct.pack("<BHH", 0, 0, 6) + b"\x02\x01\x00\x05\x00\x00"  # raw line bytes
    seeds["requests_without_a_model"] = s.records
    with open(small, "rb") as f:
        seeds["small_model_session"] = training_session(f.read(), dataset(8, 1, 1), settings(2, 0, 2, 2, 3))
    if len(sys.argv) > 3:
        with open(sys.argv[3], "rb") as f:
            seeds["gru_session"] = training_session(f.read(), dataset(4, 180, 4), settings(0, 1, 2, 1, 2))
    for name, records in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(records)


if __name__ == "__main__":
    main()
