#!/usr/bin/env python3
"""Crash census: structurally mutated models (tests/fuzz/model_mutator.h) through the gruwb CLI.

For every seed model, `model_mutate` writes COUNT mutants; each mutant goes through run, train and
grad (or `bench --train` when the seed takes no samples `train` can shape), fuse, bench and export,
with inputs and labels shaped for the seed model. A run counts as
  crash      killed by a signal, or an uncaught exception / abort
  sanitizer  an AddressSanitizer / UndefinedBehaviorSanitizer report on stderr (whatever the exit)
  hang       still running after --timeout seconds
  odd-exit   an exit status other than 0, 1 and 2, or a failure whose stderr does not end in the
             CLI's one error line "gruwb: ..."
and everything else is clean: ok (exit 0), refused (exit 2: bad input, named in one line) or failed
(exit 1: the run itself stopped, e.g. a gather index that a mutated constant put out of range,
named in one line). Prints the figures, writes every finding with its command line and
the tail of its stderr to OUT/findings.txt, and exits 1 when there is any finding.

  mutant_census.py --gruwb build/app/cli/gruwb --mutate build/tests/fuzz/model_mutate \\
      --out /tmp/census --count 100 MODEL...
"""

import argparse
import concurrent.futures
import json
import os
import shutil
import struct
import subprocess
import sys
import time

SANITIZER_MARKS = ("ERROR: AddressSanitizer", "runtime error:", "ERROR: LeakSanitizer",
                   "AddressSanitizer:DEADLYSIGNAL", "ERROR: UndefinedBehaviorSanitizer")
CRASH_MARKS = ("terminate called", "Aborted", "Segmentation fault")
CLEAN = ("ok", "refused", "failed")


def write_npy(path, dtype, shape, values):
    """A C-order .npy file ('<f4' or '<i4')."""
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        dtype, "".join("%d, " % d for d in shape) if len(shape) != 1 else "%d," % shape[0])
    header += " " * (63 - (len(header) + 10) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%d%s" % (len(values), dtype[-2]), *values))


def model_io(gruwb, model):
    """(inputs, outputs) of the main subgraph as [(shape, type)] from `gruwb inspect --json`."""
    text = subprocess.run([gruwb, "inspect", model, "--json"], capture_output=True, text=True,
                          timeout=60).stdout
    main = json.loads(text)["subgraphs"][0]
    tensors = {t["index"]: t for t in main["tensors"]}
    io = lambda ids: [(tensors[i]["shape"], tensors[i]["type"]) for i in ids]
    return io(main["inputs"]), io(main["outputs"])


def count_of(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def seed_files(gruwb, model, folder):
    """Inputs for `run` and samples/labels for `train`/`grad`, shaped for the seed model."""
    inputs, outputs = model_io(gruwb, model)
    files = {"run": [], "train": None}
    for k, (shape, dtype) in enumerate(inputs):
        if dtype not in ("FLOAT32", "INT32") or count_of(shape) > 1 << 22:
            files["run"] = None
            break
        path = os.path.join(folder, "input_%d.npy" % k)
        n = count_of(shape)
        if dtype == "FLOAT32":
            write_npy(path, "<f4", shape, [((i * 37) % 17) / 8.5 - 1.0 for i in range(n)])
        else:
            write_npy(path, "<i4", shape, [0] * n)
        files["run"].append(path)
    if (len(inputs) == 1 and inputs[0][1] == "FLOAT32" and inputs[0][0][:1] == [1] and outputs
            and outputs[0][1] == "FLOAT32" and outputs[0][0]):
        samples = 4
        sample_shape = inputs[0][0][1:]
        classes = outputs[0][0][-1]
        x = os.path.join(folder, "x.npy")
        y = os.path.join(folder, "y.npy")
        write_npy(x, "<f4", [samples] + sample_shape,
                  [((i * 13) % 11) / 5.5 - 1.0 for i in range(samples * count_of(sample_shape))])
        write_npy(y, "<f4", [samples, classes],
                  [1.0 if i % classes == (i // classes) % classes else 0.0
                   for i in range(samples * classes)])
        files["train"] = (x, y)
    return files


def commands(gruwb, mutant, files, scratch):
    ext = os.path.splitext(mutant)[1]
    out = os.path.join(scratch, "out" + ext)
    result = []
    if files["run"] is not None:
        run = [gruwb, "run", mutant]
        for path in files["run"]:
            run += ["--input", path]
        result.append(("run", run))
    if files["train"] is not None:
        x, y = files["train"]
        result.append(("train", [gruwb, "train", mutant, "--inputs", x, "--labels", y, "-o", out,
                                 "--epochs", "1", "--batch", "2"]))
        result.append(("grad", [gruwb, "grad", mutant, "--input", x, "--labels", y]))
    else:  # no samples shaped for `train`: training on bench's random samples instead
        result.append(("bench-train", [gruwb, "bench", mutant, "--repetitions", "1", "--min-time",
                                       "0.001", "--train", "all", "--batch", "1"]))
    result.append(("fuse", [gruwb, "fuse", mutant, "-o", out]))
    result.append(("bench", [gruwb, "bench", mutant, "--repetitions", "1", "--min-time", "0.001"]))
    result.append(("export", [gruwb, "export", mutant, "--to", "npy", "-o",
                              os.path.join(scratch, "weights")]))
    return result


def classify(returncode, stderr, timed_out):
    if timed_out:
        return "hang"
    if any(mark in stderr for mark in SANITIZER_MARKS):
        return "sanitizer"
    if returncode < 0 or returncode >= 128 or any(mark in stderr for mark in CRASH_MARKS):
        return "crash"
    if returncode == 0:
        return "ok"
    lines = [line for line in stderr.splitlines() if line.strip()]
    if returncode not in (1, 2) or not lines or not lines[-1].startswith("gruwb: "):
        return "odd-exit"
    return "refused" if returncode == 2 else "failed"


def run_one(name, argv, scratch, timeout):
    env = dict(os.environ)
    env.setdefault("ASAN_OPTIONS", "detect_leaks=0:allocator_may_return_null=1")
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1")
    env["QT_QPA_PLATFORM"] = "offscreen"
    os.makedirs(scratch, exist_ok=True)
    try:
        done = subprocess.run(argv, capture_output=True, text=True, errors="replace",
                              timeout=timeout, env=env, cwd=scratch)
        kind = classify(done.returncode, done.stderr, False)
        return name, argv, kind, done.returncode, done.stderr
    except subprocess.TimeoutExpired as expired:
        stderr = expired.stderr.decode(errors="replace") if expired.stderr else ""
        return name, argv, "hang", None, stderr
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gruwb", required=True)
    parser.add_argument("--mutate", required=True, help="the model_mutate tool")
    parser.add_argument("--out", required=True, help="scratch folder (emptied first)")
    parser.add_argument("--count", type=int, default=100, help="mutants per seed model")
    parser.add_argument("--first-seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=30)
    parser.add_argument("models", nargs="+")
    args = parser.parse_args()

    shutil.rmtree(args.out, ignore_errors=True)
    os.makedirs(args.out)
    start = time.time()
    jobs = []
    mutant_count = 0
    for m, model in enumerate(args.models):
        folder = os.path.join(args.out, "seed%d" % m)
        os.makedirs(folder)
        try:
            files = seed_files(args.gruwb, model, folder)
        except (ValueError, KeyError, IndexError, subprocess.SubprocessError) as error:
            print("skipping %s: the seed itself does not inspect (%s)" % (model, error))
            continue
        listing = subprocess.run([args.mutate, model, folder, str(args.count),
                                  str(args.first_seed)], capture_output=True, text=True)
        for line in listing.stdout.splitlines():
            mutant = line.split("\t", 1)[0]
            mutant_count += 1
            for name, argv in commands(args.gruwb, mutant, files, "@SCRATCH@"):
                jobs.append((name, argv, line))

    counts = {}
    findings = []
    # Findings are written as they come, so a census cut short still tells what it found.
    report = open(os.path.join(args.out, "findings.txt"), "w")
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = []
        for i, (name, argv, line) in enumerate(jobs):
            scratch = os.path.join(args.out, "scratch%d" % i)
            argv = [a.replace("@SCRATCH@", scratch) for a in argv]
            futures.append((line, pool.submit(run_one, name, argv, scratch, args.timeout)))
        for done, (line, future) in enumerate(futures, 1):
            name, argv, kind, returncode, stderr = future.result()
            counts[kind] = counts.get(kind, 0) + 1
            if kind not in CLEAN:
                findings.append((kind, name, returncode, argv, line, stderr))
                report.write("=== %s in %s (exit %s): %s\n    edits: %s\n%s\n" % (
                    kind, name, returncode, " ".join(argv), line.split("\t", 1)[-1],
                    "\n".join(stderr.splitlines()[-25:])))
                report.flush()
            if done % 500 == 0:
                print("  %d/%d runs, %d findings" % (done, len(jobs), len(findings)), flush=True)
    report.close()
    by_command = {}
    for kind, name, *_ in findings:
        by_command.setdefault(name, {}).setdefault(kind, 0)
        by_command[name][kind] += 1
    print("census: %d mutants of %d models, %d runs in %.0f s: %d clean (%d ok, %d refused, "
          "%d failed), %d crash, %d sanitizer, %d hang, %d odd-exit" % (
              mutant_count, len(args.models), len(jobs), time.time() - start,
              sum(counts.get(k, 0) for k in CLEAN), counts.get("ok", 0), counts.get("refused", 0),
              counts.get("failed", 0), counts.get("crash", 0), counts.get("sanitizer", 0),
              counts.get("hang", 0), counts.get("odd-exit", 0)))
    for name, kinds in sorted(by_command.items()):
        print("  %-12s %s" % (name, ", ".join("%d %s" % (n, k) for k, n in sorted(kinds.items()))))
    if findings:
        print("findings with their commands and stderr: %s" % os.path.join(args.out, "findings.txt"))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
