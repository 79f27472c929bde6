#!/usr/bin/env python3
"""Derive the bundled 60x3 sample dataset from BasicMotions (UEA archive).

The reference gesture model takes 60 steps x 3 accelerometer axes and 4 classes;
BasicMotions has 6 channels (3-D accelerometer, then 3-D gyroscope) x 100 steps
at 10 Hz and 4 classes. Keeping the accelerometer and the first 60 steps (6 s)
gives a dataset the shipped model trains on at once. Usage, from the repo root:
  python3 resources/samples/gen/basic_motions_acc60.py
"""
import pathlib

SAMPLES = pathlib.Path(__file__).resolve().parent.parent
STEPS, CHANNELS = 60, 3

for split in ("TRAIN", "TEST"):
    source = SAMPLES / f"BasicMotions_{split}.ts"
    lines_out = [
        "#Derived from BasicMotions_%s.ts (UEA archive, see README.md): the 3-D accelerometer" % split,
        "#channels only, cropped to the first 60 of 100 steps (6 s at 10 Hz), made by",
        "#resources/samples/gen/basic_motions_acc60.py.",
    ]
    data = False
    for line in source.read_text().splitlines():
        if line.startswith("#"):
            continue
        if not data:
            if line.startswith("@problemName"):
                line = "@problemName BasicMotionsAcc60"
            elif line.startswith("@dimensions"):
                line = "@dimensions %d" % CHANNELS
            elif line.startswith("@seriesLength"):
                line = "@seriesLength %d" % STEPS
            lines_out.append(line)
            data = line.strip() == "@data"
            continue
        parts = line.split(":")
        dims, label = parts[:-1], parts[-1]
        kept = [",".join(d.split(",")[:STEPS]) for d in dims[:CHANNELS]]
        lines_out.append(":".join(kept + [label]))
    (SAMPLES / f"BasicMotionsAcc60_{split}.ts").write_text("\n".join(lines_out) + "\n")
