#!/usr/bin/env bash
# THE "build and launch" command (README): on a fresh Debian 12 it installs what is missing, builds
# the GUI and opens it on a bundled sample model.
#   bash .ci/launch.sh [MODEL [DATASET]]
#     defaults: resources/samples/gesture_gru_fused.tflite (GRU(60) gesture classifier, 60x3 -> 4) and
#     resources/samples/BasicMotionsAcc60_TRAIN.ts (real wrist accelerometer windows that fit it), so the
#     Experiments panel can stage FC-only vs FC+GRU at once.
# Without a display (no DISPLAY/WAYLAND_DISPLAY) the GUI runs on a virtual X server (xvfb-run);
# GRUWB_SCREENSHOT=out.png then saves a screenshot after GRUWB_SCREENSHOT_DELAY (default 5) seconds
# and closes the GUI, which is how headless machines check that the window comes up.
set -euo pipefail
cd "$(dirname "$0")/.."

model=${1:-resources/samples/gesture_gru_fused.tflite}
[ -f "$model" ] || { echo "launch: no such model file: $model" >&2; exit 2; }
dataset=${2:-resources/samples/BasicMotionsAcc60_TRAIN.ts}
[ -f "$dataset" ] || { echo "launch: no such dataset file: $dataset" >&2; exit 2; }

bash .ci/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j 2 --target gru-workbench
gui=build/app/gui/gru-workbench

if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && [ -z "${GRUWB_SCREENSHOT:-}" ]; then
  exec "$gui" "$model" "$dataset"
fi

export QT_QPA_PLATFORM=xcb  # the virtual screen is an X server, whatever the caller had set
if [ -z "${GRUWB_SCREENSHOT:-}" ]; then
  echo "launch: no display; running on a virtual X server (set GRUWB_SCREENSHOT=out.png to capture it)"
  exec xvfb-run -a -s "-screen 0 1280x800x24" "$gui" "$model" "$dataset"
fi

# Screenshot mode: start the GUI on a virtual screen, photograph it, close it.
delay=${GRUWB_SCREENSHOT_DELAY:-5}
screenshot=$(realpath -m "$GRUWB_SCREENSHOT")
xvfb-run -a -s "-screen 0 1280x800x24" bash -c '
  set -u
  "$1" "$2" "$5" &
  gui_pid=$!
  sleep "$3"
  if ! kill -0 "$gui_pid" 2>/dev/null; then
    wait "$gui_pid"; echo "launch: the GUI exited early (status $?)" >&2; exit 1
  fi
  import -window root "$4"
  kill "$gui_pid"; wait "$gui_pid" 2>/dev/null
  exit 0' launch "$gui" "$model" "$delay" "$screenshot" "$dataset"
echo "launch: screenshot saved to $screenshot"
