#!/bin/bash
# The installed programs at work, run by installed_package_test.sh inside the clean root it
# installed the package into (USR=/usr), or on a package unpacked elsewhere (USR=<dir>/usr):
#   installed_programs_test.sh USR VERSION WORK
# gruwb --version, inspect on an installed sample, a one-epoch experiment, the installed
# plugins, the simulated board (board-sim, board info, a short board train), every installed
# firmware image found by `gruwb board fit` and `gruwb board flash` from the installed folder,
# and the GUI taking a screenshot (WORK/gui.png) under Xvfb (offscreen when there is none).
# One line per check; exits 1 at the first failure.
set -euo pipefail
usr=$1 version=$2 work=$3
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
ok() { echo "ok: $*"; }
gruwb=$usr/bin/gruwb
samples=$usr/share/gru-workbench/samples
mkdir -p "$work"

[[ $("$gruwb" --version) == "gruwb $version" ]] || fail "gruwb --version says '$("$gruwb" --version)', the package '$version'"
ok "gruwb --version: $version"

"$gruwb" inspect "$samples/gesture_gru_fused.tflite" >"$work/inspect.txt" ||
  fail "gruwb inspect on the installed sample"
grep -q "Subgraph#0" "$work/inspect.txt" || fail "gruwb inspect printed no subgraph"
ok "gruwb inspect on an installed sample"

"$gruwb" experiment --build cell=gru,units=4 --data "$samples/BasicMotions_TRAIN.ts" \
  --stages init,fc --epochs 1 --json "$work/experiment.json" >"$work/experiment.txt" ||
  fail "gruwb experiment: $(tail -1 "$work/experiment.txt")"
grep -q '"stages"' "$work/experiment.json" || fail "gruwb experiment wrote no stages"
ok "gruwb experiment (one epoch on the installed BasicMotions sample)"

# Plugins installed beside the programs are found from there (app/core/plugin_manager.cpp).
plugins=0
for plugin in "$usr"/lib/gru-workbench/plugins/*.so; do
  "$gruwb" plugins | grep -qF "path: $plugin" || fail "gruwb plugins did not load the installed $(basename "$plugin")"
  plugins=$((plugins + 1))
done
ok "gruwb plugins loads the $plugins installed plugins"

# The simulated board: served on a pty under a stable name, asked for its capabilities, then a
# few samples of training compared with the same run on this computer.
"$gruwb" board-sim --link "$work/board" >"$work/board-sim.txt" 2>&1 &
sim=$!
trap 'kill "$sim" 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  [[ -e $work/board ]] && break
  sleep 0.1
done
[[ -e $work/board ]] || fail "gruwb board-sim did not serve: $(cat "$work/board-sim.txt")"
"$gruwb" board info --port "$work/board" >"$work/board-info.txt" 2>&1 ||
  fail "gruwb board info on board-sim: $(tail -1 "$work/board-info.txt")"
"$gruwb" board train --port "$work/board" --model "$samples/gesture_gru_fused.tflite" \
  --data "$samples/BasicMotionsAcc60_TRAIN.ts" --samples 4 --compare-host >"$work/board-train.txt" 2>&1 ||
  fail "gruwb board train on board-sim: $(tail -1 "$work/board-train.txt")"
kill "$sim" && wait "$sim" 2>/dev/null || true
trap - EXIT
ok "gruwb board-sim: board info and 4 samples of training equal to the host's"

# The firmware images (when the package has them): every board's image and manifest, each found
# from the installed folder by `gruwb board fit` (every board) and `gruwb board flash` (boards
# with a flashing tool; QEMU boards print their QEMU command instead).
firmware=$usr/share/gru-workbench/firmware
if [[ -d $firmware ]]; then
  boards=()
  for folder in "$firmware"/*/; do
    board=$(basename "$folder")
    [[ -f $folder/gruwb_fw_$board.elf && -f $folder/gruwb_fw_$board.bin && -f $folder/gruwb_fw_$board.json ]] ||
      fail "firmware/$board has no image, raw image or manifest"
    boards+=("$board")
  done
  "$gruwb" board fit "$samples/gesture_gru_fused.tflite" --json >"$work/fit.json" 2>"$work/fit.err" ||
    fail "gruwb board fit: $(tail -1 "$work/fit.err")"
  for board in "${boards[@]}"; do
    grep -qF "\"$board\"" "$work/fit.json" || fail "gruwb board fit does not find the installed $board image"
    "$gruwb" board flash --board "$board" --tool openocd --dry-run >"$work/flash.txt" 2>&1 || true
    grep -qF "$firmware/$board/gruwb_fw_$board.elf" "$work/flash.txt" ||
      fail "gruwb board flash --board $board does not name the installed image: $(tail -1 "$work/flash.txt")"
  done
  ok "firmware images of ${#boards[@]} boards (${boards[*]}), found installed by gruwb board fit and flash"
else
  echo "note: no firmware images in this package (its description says why)"
fi

gui=("$usr/bin/gru-workbench" --screenshot "$work/gui.png" --size 1024x700
  "$samples/gesture_gru_fused.tflite")
if command -v xvfb-run >/dev/null; then
  QT_QPA_PLATFORM=xcb xvfb-run -a "${gui[@]}" >"$work/gui.txt" 2>&1 ||
    fail "gru-workbench under Xvfb: $(tail -3 "$work/gui.txt")"
  platform=Xvfb
else
  QT_QPA_PLATFORM=offscreen "${gui[@]}" >"$work/gui.txt" 2>&1 ||
    fail "gru-workbench (offscreen): $(tail -3 "$work/gui.txt")"
  platform=offscreen
fi
[[ -s $work/gui.png ]] || fail "gru-workbench wrote no screenshot"
ok "gru-workbench screenshot ($platform, $(stat -c %s "$work/gui.png") bytes)"
