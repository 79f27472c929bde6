#!/usr/bin/env python3
"""Where a firmware image's flash goes, from its GNU ld map file (-Wl,-Map=...).

    flash_breakdown.py gruwb_fw_mps2_an386.map [--top 20] [--by object|group]
                       [--engine-protocol-limit BYTES]
    flash_breakdown.py gruwb_fw_mps2_an386.map --manifest BASE.json OUT.json --op-table op_table.cpp

Counts every input section placed in flash (.isr_vector, .text incl. .rodata, .ARM.exidx,
.init_array and the load image of .data) and sums it per object file (`--by object`, the
default) or per group (`--by group`: board, protocol, board core, engine model/runtime/
kernels/train, and each toolchain library). Engine and protocol are also summed: the figure
the flash goal (engine + protocol <= 64 KB without the model) is about; with
--engine-protocol-limit the script fails when that sum is larger. Sizes are the linker's input
sections, before it merges equal strings, so the total is a few hundred bytes above
arm-none-eabi-size's.

With --manifest the script prints nothing: it writes OUT.json, the board's manifest BASE.json
(firmware.cmake) plus what the link measured, for `gruwb board fit` (app/core/board_fit.h):
"flash_used" (text + data: the output sections' sizes, as arm-none-eabi-size counts them),
"pool_bytes" (__pool_end - __pool_start: model + dataset + arena), "op_table" and per kernel
object its flash with the ops each object registers (from the generated op_table.cpp), so the
host can estimate an image with only a model's ops.
"""

import argparse
import collections
import json
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


def map_lines(map_path):
    with open(map_path, encoding="utf-8", errors="replace") as f:
        return f.read().split("\n")


def read_sections(map_path, with_names=False):
    """Yields (path, size) for every input section placed in a flash output section
    ((name, path, size) with_names)."""
    lines = map_lines(map_path)
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
                path = m.group(4).strip()
                yield (m.group(1) or pending_name, path, size) if with_names else (path, size)
            pending_name = None
            continue
        # A long section name stands alone on its line; its address/size/file follow.
        stripped = line.strip()
        pending_name = stripped if line.startswith(" .") and " " not in stripped else None


# '.text   0x00000400   0x17a2c' (an output section: name, address, size; the name may stand
# alone on the line before) and '   0x20002500   __pool_start = .' (a symbol the script sets).
OUTPUT_SIZE = re.compile(r"^(\.[A-Za-z_.0-9]+)?\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)(\s+load address 0x[0-9a-f]+)?\s*$")
ASSIGNED = re.compile(r"^\s+0x([0-9a-f]+)\s+(\w+) = ")
REGISTRATION = re.compile(r"^extern const KernelRegistration (\w+);\s*// (\w+)")


def write_manifest(map_path, base_path, out_path, op_table_path):
    lines = map_lines(map_path)
    start = lines.index("Linker script and memory map")
    flash_used = 0
    symbols = {}
    pending = None
    for line in lines[start + 1 :]:
        m = OUTPUT_SIZE.match(line)
        if m and not line.startswith("  ") and (m.group(1) or pending):
            if (m.group(1) or pending) in FLASH_SECTIONS:
                flash_used += int(m.group(3), 16)
            pending = None
            continue
        pending = line.strip() if re.match(r"^\.[A-Za-z_.0-9]+$", line) else None
        a = ASSIGNED.match(line)
        if a:
            symbols[a.group(2)] = int(a.group(1), 16)
    if "__pool_start" not in symbols or "__pool_end" not in symbols:
        sys.exit(f"{map_path}: no __pool_start/__pool_end (not a gruwb firmware map?)")
    # Kernel registrations: NAME -> symbol (op_table.cpp), symbol -> object (its section).
    ops = {}
    with open(op_table_path, encoding="utf-8") as f:
        for line in f:
            r = REGISTRATION.match(line)
            if r:
                ops[r.group(2)] = r.group(1)
    table = re.search(r"GRUWB_FW_OPS=(\S+?);", open(op_table_path, encoding="utf-8").read())
    object_bytes = collections.Counter()
    symbol_object = {}
    for name, path, size in read_sections(map_path, with_names=True):
        obj = object_name(path)
        object_bytes[obj] += size
        for symbol in ops.values():
            if name.endswith(f"{len(symbol)}{symbol}E"):
                symbol_object[symbol] = obj
    op_objects = {op: symbol_object[s] for op, s in sorted(ops.items()) if s in symbol_object}
    kernel_objects = sorted(set(op_objects.values()))
    with open(base_path, encoding="utf-8") as f:
        manifest = json.load(f)
    manifest["memory"] = {
        "flash_used": flash_used,
        "pool_bytes": symbols["__pool_end"] - symbols["__pool_start"],
        "op_table": table.group(1) if table else "",
        "kernel_objects": {obj: object_bytes[obj] for obj in kernel_objects},
        "op_objects": op_objects,
    }
    temporary = out_path + ".tmp"
    with open(temporary, "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    os.replace(temporary, out_path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("map")
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--by", choices=("object", "group"), default="object")
    parser.add_argument("--engine-protocol-limit", type=int, default=0, metavar="BYTES")
    parser.add_argument("--manifest", nargs=2, metavar=("BASE", "OUT"))
    parser.add_argument("--op-table", metavar="OP_TABLE_CPP")
    args = parser.parse_args()
    if not os.path.isfile(args.map):
        sys.exit(f"{args.map}: no such map file")
    if args.manifest:
        if not args.op_table:
            sys.exit("--manifest needs --op-table (the generated op_table.cpp)")
        write_manifest(args.map, args.manifest[0], args.manifest[1], args.op_table)
        return

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
