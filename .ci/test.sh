#!/usr/bin/env bash
# THE test command (README, .ci/run): on a fresh Debian 12 it installs what is missing, builds
# everything with ASan + UBSan and runs the whole test suite, checks that the engine cross-compiles
# for a Cortex-M4F without exceptions/Qt/iostream, trains and benches the firmware under QEMU,
# fuzzes the model reader, invoke, training, the fuser, the dataset readers and the board's message
# handler for a bounded time, sends mutated models through every gruwb command (the census), and
# installs the Release .deb into a clean Debian root and runs it there (the package).
# Every stage runs even when an earlier one failed; the exit status is non-zero if any failed.
#   GRUWB_FUZZ_SECONDS=120  each engine fuzzer's run time (reader, invoke, training step, fuser) (0: build the fuzzers, do not run them)
#   GRUWB_FUZZ_INPUTS_SECONDS=90  each dataset-reader and board-handler fuzzer's (0: build only)
#   GRUWB_CENSUS_MUTANTS=10  mutants per seed model in the census
#   GRUWB_CI_STAGES="layers test slurm portability firmware fuzz census package"   the stages to run
#     (all by default)
#   GRUWB_PACKAGE_FIRMWARE=OFF  ON: the package stage's .deb also holds every board's firmware
#     image (cross-built for each CPU: about 10 more minutes on an empty ccache, so not by default)
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
shared="$root/../shared"
jobs=2

bash .ci/install-deps.sh || exit 1

export QT_QPA_PLATFORM=offscreen

failed=()
summary=()
stages=" ${GRUWB_CI_STAGES:-layers test slurm portability firmware fuzz census package} "
rm -f build-fuzz/executions-this-run  # the fuzz stages add their totals (issue 17: 10 M a run)
# Why a stage failed, in a line or three (`why "..."` from inside the stage): the summary carries
# them, since the summary may be all of the log a reader gets to see (only its tail is kept).
why_file=$(mktemp)
trap 'rm -f "$why_file"' EXIT
why() { printf '%s\n' "$*" >>"$why_file"; }
run_stage() {
  local key=$1 name=$2
  shift 2
  [[ $stages == *" $key "* ]] || return 0
  local start=$SECONDS status
  echo
  echo "=== $name"
  # A subshell with errexit stops the stage at its first failing command. It must stand alone:
  # inside `if`, `||` or `&&` bash ignores errexit.
  : >"$why_file"
  ( set -euo pipefail; "$@" )
  status=$?
  if [ "$status" -eq 0 ]; then
    summary+=("ok    $name ($((SECONDS - start)) s)")
  else
    summary+=("FAIL  $name ($((SECONDS - start)) s)")
    failed+=("$name")
    local line
    while IFS= read -r line; do summary+=("        ${line:0:400}"); done < <(head -n 3 "$why_file")
  fi
}

# The whole suite runs once, built with ASan + UBSan (GRUWB_SANITIZE; a report aborts the test):
# one build serves the tests, the firmware stage's host side and the mutant census. It lives in
# build-asan/ so a developer's build/ keeps its own configuration. Leak checks are off: Qt's
# one-time allocations at exit are not ours to fix.
ci_build=build-asan
export ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1
ci_configure() {
  # -g1 (line tables: enough for the sanitizers' stack traces) instead of -g: the compile, most
  # of this stage, takes 30% less time per file (fuser.cpp 80 -> 56 s, objects 14 -> 6 MB,
  # 2026-12-03). -O1 instead of -O2: another 25% (app/core/experiment.cpp 34 -> 25 s); the
  # flow warnings only -O2 and -O3 see (-Werror) are still checked on every library file by
  # the package stage's Release build.
  cmake -S . -B "$ci_build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGRUWB_SANITIZE=ON \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG"
}
build_and_test() {
  ci_configure
  cmake --build "$ci_build" -j "$jobs"
  ctest --test-dir "$ci_build" --output-on-failure -j "$jobs" && return 0
  why "failed tests: $(cut -d: -f2 "$ci_build/Testing/Temporary/LastTestsFailed.log" | head -n 12 | tr '\n' ' ')"
  return 1
}

# A sweep as one Slurm array job on a one-node cluster the script starts and stops (slurmctld,
# slurmd, munge from Debian), checked against the same sweep run here (docs/sweeps.md).
sweep_slurm() {
  ci_configure >/dev/null
  cmake --build "$ci_build" -j "$jobs" --target gruwb
  bash tests/app/sweep_slurm_test.sh "$ci_build"
}

# The layers of docs/architecture.md, by their #include lines (no build needed): each rule names
# a folder and the folders it must not include from. Every violation is listed with its line.
layer_check() {
  local status=0
  # folder ; forbidden include prefixes (extended regex) ; why
  local rules=(
    'views;engine/(runtime|train)/;views show app and engine/tools results, they never run the engine themselves'
    'serial;app/;the board side and the host link sit below the application layer'
    'engine;(app|views|serial|plugins)/;the engine knows nothing above it'
    'engine/model;engine/(runtime|kernels|train|tools)/;the model reader is the bottom layer'
    'engine/runtime;engine/(tools|train)/;the runtime knows neither the host tools nor training (engine/train hands it TrainingSteps)'
    'engine/kernels;engine/(tools|train)/;kernels know neither the host tools nor training'
    'plugins/cells;(engine/(tools|train)|app|views|serial)/;cell kernels compile into the engine kernels: they know neither host tools, training nor what sits above the engine'
    'plugins/cells;(app|views|serial)/;a cell plugin'"'"'s host side (host/: its descriptor) sits beside engine/tools, below the application'
    'plugins/examples;(engine|app|views|serial|plugins)/;a plugin compiles against the SDK headers (#include "gruwb/...") only'
    'tests/plugins/test_plugins;(engine|app|views|serial|plugins)/;a plugin compiles against the SDK headers (#include "gruwb/...") only'
    'plugins/include;(views|plugins)/;the SDK headers expose engine, app core and serial link types, never widgets'
  )
  local rule folder forbidden why hits
  for rule in "${rules[@]}"; do
    IFS=';' read -r folder forbidden why <<<"$rule"
    hits=$(grep -rnE "^\s*#\s*include\s*\"${forbidden}" "$folder" \
      --include='*.h' --include='*.hpp' --include='*.cpp' --include='*.cc' || true)
    # engine/tools is the engine's host-only layer and may include the rest of the engine; so
    # may a cell plugin's host side (plugins/cells/<cell>/host/), which the second plugins/cells
    # rule holds below the application.
    [ "$folder" = engine ] && hits=$(grep -v '^engine/tools/' <<<"$hits" || true)
    [ "$folder" = plugins/cells ] && [ "$forbidden" != '(app|views|serial)/' ] &&
      hits=$(grep -vE '^plugins/cells/[^/]+/host/' <<<"$hits" || true)
    if [ -n "$hits" ]; then
      echo "$folder/ must not include ${forbidden}: $why"
      echo "$hits"
      status=1
    fi
  done
  [ "$status" -eq 0 ] && echo "layers: every #include follows docs/architecture.md"
  return "$status"
}

# The engine runs in MCU firmware: it must build for a Cortex-M4F and must not throw or pull in
# Qt, iostream or threads. Built in the firmware stage's folder with its first configuration
# (every kernel), so that stage compiles the engine only once.
firmware_configure() {
  cmake -S . -B build-firmware -G Ninja -DCMAKE_TOOLCHAIN_FILE="$root/engine/cortex-m4f.cmake" \
    -DCMAKE_BUILD_TYPE=MinSizeRel -DGRUWB_ENGINE_ONLY=ON -DGRUWB_FIRMWARE=ON -DGRUWB_FW_OPS="$1" \
    -DGRUWB_BOARD=mps2_an386
}
portability_check() {
  local dir=build-firmware
  firmware_configure all
  cmake --build "$dir" -j "$jobs" --target gruwb_engine
  # gruwb_engine links one library per layer (engine/CMakeLists.txt).
  local library=() layer
  for layer in model runtime kernels train; do
    library+=("$dir/engine/libgruwb_$layer.a")
    [ -f "${library[-1]}" ] || { echo "${library[-1]} not found"; return 1; }
  done
  echo "--- arm-none-eabi-size -t ${library[*]}"
  arm-none-eabi-size -t "${library[@]}"

  local status=0
  local exception_symbols
  exception_symbols=$(arm-none-eabi-nm -A -u "${library[@]}" |
    grep -E '__cxa_throw|__cxa_allocate_exception|__cxa_begin_catch|__gxx_personality' || true)
  if [ -n "$exception_symbols" ]; then
    echo "engine objects reference C++ exception support:"
    echo "$exception_symbols"
    status=1
  fi
  local host_includes
  host_includes=$(grep -rnE '^\s*#\s*include\s*[<"]((Qt[A-Za-z]*/)?Q[A-Za-z]+(\.h)?|iostream|thread|mutex|stdexcept|exception)[>"]' \
    engine plugins/cells --include='*.h' --include='*.hpp' --include='*.cpp' --include='*.cc' |
    grep -vE '^(engine/tools|plugins/cells/[^/]+/host)/' || true)
  if [ -n "$host_includes" ]; then
    echo "engine sources include host-only headers (Qt, iostream, threads, exceptions):"
    echo "$host_includes"
    status=1
  fi
  local heap_symbols
  heap_symbols=$(arm-none-eabi-nm -A -u "${library[@]}" | grep -E ' U (malloc|calloc|realloc|free|_Zn[wa]j)' || true)
  if [ -n "$heap_symbols" ]; then
    echo "note: engine objects reference the heap:"
    echo "$heap_symbols"
  fi
  [ "$status" -eq 0 ] && echo "engine: no exceptions, no Qt/iostream/thread includes"
  return "$status"
}

# libFuzzer targets two at a time (one per core), $2 seconds each, then their logs: a sanitizer
# report, a crash or missing final stats is a finding (the input is saved as
# build-fuzz/TARGET-crash-*, or leak-, timeout-, oom-). Each corpus stays in build-fuzz/corpus-TARGET
# between runs. Arguments: DIR SECONDS LABEL then TARGET:MAX_LEN:SEEDS entries (MAX_LEN may be
# empty: libFuzzer's default from the seeds).
run_fuzzers() {
  local dir=$1 seconds=$2 label=$3
  shift 3
  local entry target max_len seeds running=0
  # A fixed seed (GRUWB_FUZZ_SEED, default 1) starts every run alike, but runs still part ways
  # (docs/building.md, "Fuzzing"): a finding is named in the summary (`why`), not assumed to
  # come back locally. GRUWB_FUZZ_SEED=0 lets libFuzzer pick a new seed each run, for exploring.
  local seed=${GRUWB_FUZZ_SEED:-1}
  for entry in "$@"; do
    IFS=: read -r target max_len seeds <<<"$entry"
    mkdir -p "$dir/corpus-$target"
    # No 0xbe fill of fresh blocks and a smaller quarantine: a quarter more executions a second.
    UBSAN_OPTIONS=print_stacktrace=1 \
      ASAN_OPTIONS=detect_leaks=1:max_malloc_fill_size=0:quarantine_size_mb=32 \
      "$dir/tests/fuzz/$target" -seed="$seed" -max_total_time="$seconds" -rss_limit_mb=2048 \
      ${max_len:+-max_len=$max_len} -timeout=30 -print_final_stats=1 \
      -artifact_prefix="$dir/$target-" "$dir/corpus-$target" "$seeds" >"$dir/$target.log" 2>&1 &
    running=$((running + 1))
    if [ "$running" -eq "$jobs" ]; then
      wait -n || true
      running=$((running - 1))
    fi
  done
  wait || true
  local status=0 total=0 runs speed log
  for entry in "$@"; do
    target=${entry%%:*}
    log="$dir/$target.log"
    # `|| true`: no statistics is a finding, reported below, not a silent end of the stage.
    runs=$(grep -a '^stat::number_of_executed_units:' "$log" | tail -n 1 | awk '{print $2}' || true)
    speed=$(grep -a '^stat::average_exec_per_sec:' "$log" | tail -n 1 | awk '{print $2}' || true)
    if [ -z "$runs" ] || grep -aqE '^==[0-9]+==ERROR|ERROR: |runtime error:|deadly signal' "$log"; then
      echo "$target: FINDING (the input is saved as $dir/$target-crash-*). Log tail:"
      tail -n 60 "$log"
      local error frame input
      error=$(grep -a -m1 -E '^==[0-9]+==ERROR|ERROR: |runtime error:|deadly signal' "$log" ||
        echo "no final statistics (killed from outside?)")
      frame=$(grep -a -m1 -E '^ *#[0-9]+ 0x[0-9a-f]+ in .* [^ ]*/(engine|plugins|tests)/' "$log" |
        sed -E 's/^ *#[0-9]+ 0x[0-9a-f]+ in //; s| [^ ]*/(engine\|plugins\|tests)/| \1/|' || true)
      input=$(find "$dir" -maxdepth 1 -name "$target-*" -type f -printf '%f, %s bytes' -quit)
      why "$target: ${error:0:150}${frame:+ | ${frame:0:150}}${input:+ | $input}"
      status=1
      continue
    fi
    total=$((total + runs))
    echo "$target: $runs executions in $seconds s ($speed/s), no finding;" \
      "corpus $(find "$dir/corpus-$target" -type f | wc -l) inputs"
  done
  echo "$label: $total executions in total"
  echo "$total" >>"$dir/executions-this-run"
  echo "all fuzzers of this run so far: $(awk '{n += $1} END {print n}' "$dir/executions-this-run") executions"
  return "$status"
}

# ---- The model reader and the engine past it (issue 17) ----------------------------------------
# The reader, load + prepare + invoke, one training step, the fuser (tests/fuzz/engine_fuzz.cpp,
# with the flatbuffer-aware model mutator), GRUWB_FUZZ_SECONDS each (0: build only), seeded with
# every model in ../shared, the samples, the test fixtures and the inputs of earlier findings
# (tests/fuzz/regressions). Any finding fails the stage.
fuzz_engine() {
  local dir=build-fuzz
  local seconds=${GRUWB_FUZZ_SECONDS:-120}
  local targets=(model_reader_fuzz model_invoke_fuzz model_train_fuzz model_fuse_fuzz)
  CC=clang-14 CXX=clang++-14 cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DGRUWB_ENGINE_ONLY=ON -DGRUWB_FUZZ=ON
  cmake --build "$dir" -j "$jobs" --target "${targets[@]}"
  [ "$seconds" -gt 0 ] || { echo "fuzz run skipped (GRUWB_FUZZ_SECONDS=0)"; return 0; }
  # libFuzzer writes new inputs into the first corpus folder only, so the read-only seeds are one
  # scratch folder.
  local seeds="$dir/seeds-models"
  rm -rf "$seeds" && mkdir -p "$seeds"
  find "$shared/data/models" resources/samples tests/fixtures tests/fuzz/regressions -type f \
    \( -name '*.tflite' -o -name '*.circle' \) -size -512k -exec cp {} "$seeds/" \;
  [ -n "$(ls "$seeds")" ] || { echo "no seed models found in $shared/data/models"; return 1; }
  local target entries=()
  for target in "${targets[@]}"; do entries+=("$target::$seeds"); done
  run_fuzzers "$dir" "$seconds" "models" "${entries[@]}"
}

# The crash census in small: mutants of a few shipped models (tests/fuzz/model_mutator.h) through
# run/train/grad/fuse/bench/export of the sanitized gruwb; any crash or sanitizer report fails it.
# An int8 LSTM among them sends mutated integer models through training's float form.
# GRUWB_CENSUS_MUTANTS per seed model (default 10).
census() {
  cmake --build "$ci_build" -j "$jobs" --target gruwb model_mutate
  local models=(resources/samples/gesture_gru_while.tflite resources/samples/gesture_gru.circle
    resources/samples/tflm_hello_world_float.tflite "$shared/data/models/tflite/litert_nested_while.tflite"
    "$shared/data/models/onert-micro/synthetic_gru_fc_softmax_t3_i2_h4_c3.circle"
    tests/fixtures/quantized/quant_lstm_int8.tflite)
  python3 tests/fuzz/mutant_census.py --gruwb "$root/$ci_build/app/cli/gruwb" \
    --mutate "$root/$ci_build/tests/fuzz/model_mutate" --out "$root/$ci_build/census" \
    --count "${GRUWB_CENSUS_MUTANTS:-10}" --timeout 120 --jobs "$jobs" "${models[@]}" && return 0
  why "$(grep -a -m1 '^===' "$root/$ci_build/census/findings.txt" || echo "no finding written")"
  return 1
}

# The int8 image must compute what the host computes, bit for bit: the reference GRU quantized by
# `gruwb quantize`, timed on the emulated board by `gruwb board bench` (exit 1 on any difference).
int8_board_bench() {
  local elf=$1 model=build-firmware/gesture_int8.tflite log=build-firmware/qemu-int8.log
  command -v qemu-system-arm >/dev/null || { echo "qemu-system-arm missing"; return 1; }
  [ -x "$ci_build/app/cli/gruwb" ] || cmake --build "$ci_build" -j "$jobs" --target gruwb
  "$ci_build/app/cli/gruwb" quantize resources/samples/gesture_gru_fused.tflite \
    --data resources/samples/BasicMotionsAcc60_TRAIN.ts -o "$model" || return 1
  # The board's QEMU arguments (machine, -serial pty) are the build's gruwb_fw_<board>.qemu.
  # The old log goes first: the loop below could read the last run's pty from it before QEMU
  # truncates it.
  rm -f "$log"
  # shellcheck disable=SC2046
  qemu-system-arm $(cat "${elf%.elf}.qemu") -kernel "$elf" -display none -monitor none \
    -icount shift=0 >"$log" 2>&1 &
  local qemu=$! port="" rc=0
  for _ in $(seq 50); do
    port=$(grep -o '/dev/pts/[0-9]*' "$log" | head -1 || true)
    [ -n "$port" ] && break
    sleep 0.1
  done
  # 3 s per request: QEMU feeds the board one byte per main-loop turn, which a busy runner slows
  # to ~1 KB/s, and the default 1 s then times out whole upload windows.
  timeout 300 "$ci_build/app/cli/gruwb" board bench "$model" --port "$port" --runs 5 \
    --timeout-ms 3000 || rc=$?
  kill "$qemu" 2>/dev/null || true
  wait "$qemu" 2>/dev/null || true
  return $rc
}

# ---- Dataset readers and the board's message handler (issue 17) ----------------------------
# libFuzzer + ASan/UBSan on each dataset reader (.ts, .arff, .csv, .npy pair, .npz) and on the
# firmware's Device fed arbitrary frames, GRUWB_FUZZ_INPUTS_SECONDS each (0: build only). Seeds:
# the datasets in ../shared and tests/fixtures, cut to their first 1 KB, and whole board sessions
# from tests/fuzz/make_device_seeds.py.
fuzz_inputs() {
  local dir=build-fuzz
  local seconds=${GRUWB_FUZZ_INPUTS_SECONDS:-90}
  local targets=(dataset_ts_fuzz dataset_arff_fuzz dataset_csv_fuzz dataset_npy_fuzz
    dataset_npz_fuzz device_fuzz)
  CC=clang-14 CXX=clang++-14 cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DGRUWB_ENGINE_ONLY=ON -DGRUWB_FUZZ=ON
  cmake --build "$dir" -j "$jobs" --target "${targets[@]}"
  [ "$seconds" -gt 0 ] || { echo "fuzz runs skipped (GRUWB_FUZZ_INPUTS_SECONDS=0)"; return 0; }

  local seeds="$dir/seeds-inputs"
  rm -rf "$seeds" && mkdir -p "$seeds"/{ts,arff,csv,npy,npz,device}
  local file
  for file in "$shared"/data/datasets/*/*.ts "$shared"/data/datasets/*/*.arff \
    tests/fixtures/datasets/*.csv; do
    head -c 1024 "$file" >"$seeds/${file##*.}/$(basename "$file")"
  done
  cp tests/fixtures/datasets/*.npz "$seeds/npz/"
  # .npy pairs (u16 length of x.npy, x.npy, y.npy) from the arrays inside the .npz fixtures.
  python3 - "$seeds/npy" tests/fixtures/datasets/*.npz <<'PY'
import struct, sys, zipfile
for path in sys.argv[2:]:
    with zipfile.ZipFile(path) as z:
        names = set(z.namelist())
        for split in ("_train", "_test", ""):
            x_name, y_name = "x%s.npy" % split, "y%s.npy" % split
            if x_name in names and y_name in names:
                x, y = z.read(x_name), z.read(y_name)
                if len(x) < 65536:
                    name = "%s/%s%s" % (sys.argv[1], path.split("/")[-1], split)
                    open(name, "wb").write(struct.pack("<H", len(x)) + x + y)
PY
  python3 tests/fuzz/make_device_seeds.py "$seeds/device" \
    resources/samples/tflm_hello_world_float.tflite resources/samples/gesture_gru_fused.tflite

  # Text datasets are seeded with 1 KB cuts (a header and a few rows); .npy pairs, whole .npz files
  # and board sessions are longer.
  local target kind max_len entries=()
  for target in "${targets[@]}"; do
    kind=${target#dataset_}
    kind=${kind%_fuzz}
    # Short inputs run faster (1 KB of .ts text: half again as many executions as 4 KB); a board
    # session of 16 KB holds a model upload and a short training run.
    case $kind in npy) max_len=4096 ;; npz | device) max_len=16384 ;; *) max_len=1024 ;; esac
    entries+=("$target:$max_len:$seeds/$kind")
  done
  run_fuzzers "$dir" "$seconds" "dataset readers + board handler" "${entries[@]}"
}

# `gruwb export --to firmware-lib` (docs/export.md): the reference model's folder built with its
# own Makefile for the Cortex-M4F (arm-none-eabi-gcc, through ccache when present) and its example
# run under QEMU (mps2-an386, semihosting): it exits 0 only when its outputs equal the host's
# (bit-identical or within 1e-4, example/example_data.h). A fixed folder, so ccache hits next run.
firmware_lib_qemu() {
  local dir=build-firmware/firmware_lib prefix=arm-none-eabi- start=$SECONDS
  [ -x "$ci_build/app/cli/gruwb" ] || cmake --build "$ci_build" -j "$jobs" --target gruwb
  command -v ccache >/dev/null && prefix="ccache arm-none-eabi-"
  rm -rf "$dir"
  "$ci_build/app/cli/gruwb" export resources/samples/gesture_gru_fused.tflite --to firmware-lib -o "$dir"
  make -C "$dir" -j "$jobs" BOARD=mps2_an386 PREFIX="$prefix" >"$dir.log" ||
    { tail -30 "$dir.log"; return 1; }
  tail -3 "$dir.log"
  timeout 60 make -C "$dir" --no-print-directory run BOARD=mps2_an386
  echo "--- firmware-lib: exported, built and run under QEMU in $((SECONDS - start)) s"
}

# `gruwb board fit` estimates the flash of an image with only a model's ops from the `all`
# image's kernel objects (app/core/board_fit.h); against the real `reference` image it must err
# high, by less than 15 % (docs/firmware.md: +8 % on 2026-12-03).
fit_estimate_check() {
  local manifests=$1 reference_manifest=$2 estimate actual
  [ -x "$ci_build/app/cli/gruwb" ] || cmake --build "$ci_build" -j "$jobs" --target gruwb
  estimate=$(GRUWB_FIRMWARE_DIR="$manifests" "$ci_build/app/cli/gruwb" board fit \
    resources/samples/gesture_gru_fused.tflite --json | python3 -c '
import json, sys
flash = json.load(sys.stdin)["boards"][0]["flash"]
print([n["needed"] for n in flash if n["what"] == "flash, this model'"'"'s ops"][0])')
  actual=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["memory"]["flash_used"])' \
    "$reference_manifest")
  echo "board fit: reference model's ops estimated at $estimate B of flash; the reference image has $actual B"
  [ "$estimate" -ge "$actual" ] && [ $((estimate * 100)) -le $((actual * 115)) ] ||
    { echo "the estimate is not within [actual, actual + 15 %]"; return 1; }
}

# The board firmware: the same engine + protocol cross-built for QEMU's mps2-an386
# (Cortex-M4F, 512 KB RAM), its size, then one epoch of training on it over the emulated
# UART, compared with the host run (tests/serial/qemu_test.cpp); then the same training on
# every other board QEMU runs (docs/firmware.md, "Boards").
firmware_elf() { echo "$1/serial/firmware/boards/$2/gruwb_fw_$2.elf"; }
elf_symbol() { arm-none-eabi-nm "$1" | awk -v name="$2" '$3 == name {print $1}'; }
firmware_qemu() {
  local dir=build-firmware
  local elf
  elf=$(firmware_elf "$dir" mps2_an386)
  # Every kernel (`all`) for its size, then the default `reference` op table (docs/firmware.md),
  # which the QEMU test runs; switching tables recompiles one generated file and relinks.
  local ops
  # The reference GRU after `gruwb quantize` (its `gruwb inspect` line): the integer forms only.
  local int8_ops=QUANTIZE,GRUWB_GRU:int8,DEQUANTIZE,FULLY_CONNECTED:int8,SOFTMAX:int8
  # The `all` image's manifest is kept for `gruwb board fit`'s estimate, checked below.
  local fit_dir=$dir/fit-manifests
  rm -rf "$fit_dir" && mkdir -p "$fit_dir/mps2_an386"
  for ops in all "$int8_ops" reference; do
    firmware_configure "$ops"
    cmake --build "$dir" -j "$jobs" --target gruwb_fw_mps2_an386
    echo "--- GRUWB_FW_OPS=$ops: arm-none-eabi-size $elf"
    arm-none-eabi-size "$elf"
    if [ "$ops" = all ]; then cp "${elf%.elf}.json" "$fit_dir/mps2_an386/"; fi
    if [ "$ops" = "$int8_ops" ]; then int8_board_bench "$elf" || return 1; fi
  done
  fit_estimate_check "$fit_dir" "${elf%.elf}.json" || return 1
  # Where the reference image's flash goes; fails when engine + protocol exceed the 64 KB goal.
  python3 serial/firmware/boards/flash_breakdown.py "${elf%.elf}.map" --by group \
    --engine-protocol-limit 65536 || return 1
  # An inference-only image (GRUWB_TRAINING=OFF: no kernel's backward is linked) must be smaller;
  # then back to training on for the QEMU test (ccache makes the switch back cheap).
  local trained_bytes inference_bytes
  trained_bytes=$(arm-none-eabi-size "$elf" | awk 'NR == 2 {print $1 + $2}')
  cmake -S . -B "$dir" -DGRUWB_TRAINING=OFF
  cmake --build "$dir" -j "$jobs" --target gruwb_fw_mps2_an386
  echo "--- GRUWB_FW_OPS=reference GRUWB_TRAINING=OFF: arm-none-eabi-size $elf"
  arm-none-eabi-size "$elf"
  inference_bytes=$(arm-none-eabi-size "$elf" | awk 'NR == 2 {print $1 + $2}')
  echo "flash (text + data): $trained_bytes B with training, $inference_bytes B inference-only"
  cmake -S . -B "$dir" -DGRUWB_TRAINING=ON
  cmake --build "$dir" -j "$jobs" --target gruwb_fw_mps2_an386
  [ "$inference_bytes" -lt "$trained_bytes" ] || { echo "the inference-only image is not smaller"; return 1; }
  command -v qemu-system-arm >/dev/null || { echo "qemu-system-arm missing (install-deps.sh installs it)"; return 1; }
  firmware_lib_qemu
  [ -x "$ci_build/tests/serial/serial_qemu_test" ] ||
    cmake --build "$ci_build" -j "$jobs" --target serial_qemu_test

  # Every board QEMU runs, `reference` op table, one image each: the Cortex-M4F boards share
  # build-firmware (switching GRUWB_BOARD compiles only the board's files), the other CPUs get
  # a folder of their own. Each prints its flash and RAM and trains under QEMU like the host.
  local entry board cpu board_dir start pool
  for entry in mps2_an386:cortex-m4f nucleo_f446re:cortex-m4f mps2_an500:cortex-m7 \
    mps2_an505:cortex-m33; do
    board=${entry%%:*} cpu=${entry#*:} start=$SECONDS
    board_dir=$dir
    [ "$cpu" = cortex-m4f ] || board_dir=$dir-$cpu
    cmake -S . -B "$board_dir" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$root/engine/$cpu.cmake" \
      -DCMAKE_BUILD_TYPE=MinSizeRel -DGRUWB_ENGINE_ONLY=ON -DGRUWB_FIRMWARE=ON \
      -DGRUWB_FW_OPS=reference -DGRUWB_TRAINING=ON -DGRUWB_BOARD="$board" >/dev/null
    cmake --build "$board_dir" -j "$jobs" --target "gruwb_fw_$board"
    elf=$(firmware_elf "$board_dir" "$board")
    pool=$((0x$(elf_symbol "$elf" __pool_end) - 0x$(elf_symbol "$elf" __pool_start)))
    echo "--- $board ($cpu; qemu-system-arm $(cat "${elf%.elf}.qemu")): arm-none-eabi-size $elf"
    arm-none-eabi-size "$elf"
    arm-none-eabi-size "$elf" | awk -v pool="$pool" 'NR == 2 {
      printf "flash %d B (text + data), static RAM %d B (data + bss), pool %d B\n", $1 + $2, $2 + $3, pool}'
    GRUWB_FW_OPS=reference GRUWB_FW_ELF="$root/$elf" "$ci_build/tests/serial/serial_qemu_test"
    # The real manifest of a board that can be flashed, as `gruwb board flash` reads it
    # (tests/app/gruwb_board_flash_test.cpp runs the tools).
    if ! grep -q '"tools": \[\]' "${elf%.elf}.json"; then
      "$ci_build/app/cli/gruwb" board flash --image "$elf" --dry-run || return 1
    fi
    echo "--- $board: built and trained under QEMU in $((SECONDS - start)) s"
  done
}

# The Debian package as a user installs it (issue 22): a Release build of its own (build-pkg/,
# ccache, no tests), the .deb, then tests/packaging/installed_package_test.sh installs it with apt
# into a clean Debian root and runs the installed programs there (CLI, board-sim, the GUI under
# Xvfb; the firmware images when built with them), and checks man pages, completion, MIME types,
# AppStream and lintian. On an empty ccache the Release build is about 18 CPU-minutes (its
# objects share nothing with build-asan/); the firmware images would add about 18 more, which is
# why they are in only with GRUWB_PACKAGE_FIRMWARE=ON (the firmware stage builds and runs every
# board's image; tests/app/gruwb_board_flash_test.cpp checks an installed gruwb finds them).
package_check() {
  cmake -S . -B build-pkg -G Ninja -DCMAKE_BUILD_TYPE=Release -DGRUWB_BUILD_TESTS=OFF \
    -DGRUWB_FIRMWARE_IMAGES="${GRUWB_PACKAGE_FIRMWARE:-OFF}" >/dev/null
  rm -f build-pkg/gru-workbench*.deb build-pkg/gru-workbench*.ddeb
  local start=$SECONDS
  cmake --build build-pkg -j "$jobs" --target package
  echo "--- package built in $((SECONDS - start)) s"
  tests/packaging/installed_package_test.sh build-pkg/gru-workbench_*_amd64.deb
}

run_stage layers "layers: includes follow docs/architecture.md" layer_check
run_stage test "build and test, ASan + UBSan (build-asan/)" build_and_test
run_stage slurm "slurm: gruwb sweep --slurm on a one-node cluster, ASan + UBSan (build-asan/)" sweep_slurm
run_stage portability "portability: engine for Cortex-M4F (build-firmware/)" portability_check
run_stage firmware "firmware: every board's image trains under QEMU (build-firmware*/)" firmware_qemu
run_stage fuzz "fuzz: reader, invoke, training step, fuser (build-fuzz/)" fuzz_engine
run_stage fuzz "fuzz: dataset readers and the board's message handler (build-fuzz/)" fuzz_inputs
run_stage census "census: mutated models through every gruwb command, ASan + UBSan (build-asan/)" census
run_stage package "package: the Release .deb installed in a clean Debian root and run, AppStream, lintian (build-pkg/)" package_check

echo
echo "=== summary (total $SECONDS s)"
printf '%s\n' "${summary[@]}"
[ ${#failed[@]} -eq 0 ]
