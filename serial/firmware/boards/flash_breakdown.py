#!/usr/bin/env python3
"""Where a firmware image's flash goes, from its GNU ld map file (-Wl,-Map=...).

    flash_breakdown.py gruwb_fw_mps2_an386.map [--top 20] [--by object|group]
                       [--engine-protocol-limit BYTES]

Counts every input section placed in flash (.isr_vector, .text incl. .rodata, .ARM.exidx,
.init_array and the load image of .data) and sums it per object file (`--by object`, the
default) or per group (`--by group`: board, protocol, board core, engine model/runtime/
kernels/train, and each toolchain library). Engine and protocol are also summed: the figure
the flash goal (engine + protocol <= 64 KB without the model) is about; with
--engine-protocol-limit the script fails when that sum is larger. Sizes are the linker's input
sections, before it merges equal strings, so the total is a few hundred bytes above
arm-none-eabi-size's.
"""

import argparse
import collections
import os
import re
import sys

FLASH_SECTIONS = {".isr_vector", ".text", ".ARM.exidx", ".init_array", ".data"}
# ' .text.name  0x00000123  0x45 path/to/file.o' (name may be on the previous line).
INPUT = re.compile(r"^ (\S+)?\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$")
OUTPUT = re.compile(r"^(\.[A-Za-z_.0-9]+)\b")


def object_name(path):
    # 'lib/libc_nano.a(libc_a-vfprintf.o)' -> 'libc_nano.a(libc_a-vfprintf.o)'
    m = re.match(r"^(.*?)([^/]+\.a)\((.+)\)$", path)
    if m:
        return f"{m.group(2)}({m.group(3)})"
    return re.sub(r"^.*/CMakeFiles/[^/]+\.dir/", "", path).replace(".obj", "")


def group_name(path):
    m = re.match(r"^(.*?)([^/]+\.a)\((.+)\)$", path)
    if m:
        archive, member = m.group(2), m.group(3)
        if archive in ENGINE_LAYERS:
            # One archive per engine layer (engine/CMakeLists.txt).
            return "engine " + engine_part(archive, member)
        if archive == "libgruwb_protocol.a":
            return "protocol"
        if archive == "libgruwb_board_core.a":
            return "board core (Device, TrainingRun)"
        return archive
    return "board (startup, board support)"


ENGINE_LAYERS = {
    "libgruwb_model.a": "model reader (verifier, views)",
    "libgruwb_runtime.a": "runtime (interpreter, planner)",
    "libgruwb_kernels.a": "kernels",
    "libgruwb_train.a": "trainer",
}


def engine_part(archive, member):
    name = member.replace(".cpp.obj", "").replace(".obj", "")
    if name in ("registry", "op_table"):
        return "op table"
    return ENGINE_LAYERS[archive]


def read_sections(map_path):
    """Yields (path, size) for every input section placed in a flash output section."""
    with open(map_path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    try:
        start = lines.index("Linker script and memory map")
    except ValueError:
        sys.exit(f"{map_path}: no 'Linker script and memory map' section (not a GNU ld map?)")
    current = None
    pending_name = None
    for line in lines[start + 1 :]:
        out = OUTPUT.match(line)
        if out:
            current = out.group(1)
            continue
        if current not in FLASH_SECTIONS:
            continue
        m = INPUT.match(line)
        if m and (m.group(1) or pending_name):
            size = int(m.group(3), 16)
            if size:
                yield m.group(4).strip(), size
            pending_name = None
            continue
        # A long section name stands alone on its line; its address/size/file follow.
        stripped = line.strip()
        pending_name = stripped if line.startswith(" .") and " " not in stripped else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("map")
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--by", choices=("object", "group"), default="object")
    parser.add_argument("--engine-protocol-limit", type=int, default=0, metavar="BYTES")
    args = parser.parse_args()
    if not os.path.isfile(args.map):
        sys.exit(f"{args.map}: no such map file")

    totals = collections.Counter()
    groups = collections.Counter()
    for path, size in read_sections(args.map):
        totals[object_name(path) if args.by == "object" else group_name(path)] += size
        groups[group_name(path)] += size
    flash = sum(totals.values())
    if flash == 0:
        sys.exit(f"{args.map}: no input sections in flash")
    print(f"{'bytes':>8}  {'share':>6}  {args.by}")
    for name, size in totals.most_common(args.top):
        print(f"{size:8d}  {100.0 * size / flash:5.1f}%  {name}")
    rest = flash - sum(size for _, size in totals.most_common(args.top))
    if rest:
        print(f"{rest:8d}  {100.0 * rest / flash:5.1f}%  ({len(totals) - args.top} more)")
    print(f"{flash:8d}  100.0%  flash in total")
    engine = sum(size for name, size in groups.items() if name.startswith("engine "))
    protocol = groups["protocol"]
    board_core = groups["board core (Device, TrainingRun)"]
    board = groups["board (startup, board support)"]
    print(f"engine + protocol: {engine + protocol} bytes (engine {engine}, protocol {protocol}); "
          f"board core {board_core}, board {board}, "
          f"toolchain libraries {flash - engine - protocol - board_core - board}")
    if args.engine_protocol_limit and engine + protocol > args.engine_protocol_limit:
        sys.exit(f"engine + protocol take {engine + protocol} bytes of flash, more than the "
                 f"{args.engine_protocol_limit}-byte goal")

if __name__ == "__main__":
    main()
