#!/usr/bin/env bash
# Regenerates the README screenshots with the real app under the offscreen
# platform: each view at 1366x768 and at 4K (3840x2160, scale factor 2 as on
# a HiDPI monitor). Usage: docs/screenshots/take_screenshots.sh <build-dir>
set -euo pipefail
build=${1:?usage: $0 <build-dir>}
app="$build/app/gui/gru-workbench"
here=$(cd "$(dirname "$0")" && pwd)
samples=$(cd "$here/../../resources/samples" && pwd)
# A fresh settings folder: the user's saved layout must not leak in.
export XDG_CONFIG_HOME=$(mktemp -d)
export QT_QPA_PLATFORM=offscreen
trap 'rm -rf "$XDG_CONFIG_HOME"' EXIT

shot() {  # name, then app arguments
  local name=$1
  shift
  "$app" "$@" --size 1366x768 --screenshot "$here/${name}_1366x768.png"
  QT_SCALE_FACTOR=2 "$app" "$@" --size 1920x1080 --screenshot "$here/${name}_3840x2160.png"
}

# Main window: the WHILE-loop GRU's main graph, model tree and tensor inspector.
shot main_window "$samples/gesture_gru_while.tflite" --find WHILE --tensor 0:0
# Graph view inside the WHILE body (the GRU cell, weights as badges).
shot graph_while_body "$samples/gesture_gru_while.tflite" --subgraph 2 --find FULLY_CONNECTED
# Tensor inspector on the fused GRU's recurrent kernel.
shot tensor_inspector "$samples/gesture_gru_fused.tflite" --tensor 0:2 --dock tensor
# Op inspector: a click on the fused GRU op shows its attributes and named inputs.
shot op_inspector "$samples/gesture_gru_fused.tflite" --find GRUWB_GRU --dock tensor
# The welcome page (no model open): jobs, bundled samples, recent files.
shot welcome_page
# Dataset dock: classes per split and a sample of each class per channel.
shot dataset_view "$samples/gesture_gru_fused.tflite" "$samples/BasicMotionsAcc60_TRAIN.ts" --dock dataset
# Size view: analyzer figures, arena for inference and training.
shot size_view "$samples/gesture_gru_while.tflite" --dock size

# The training docks after a real run (--run waits for it to end): the fused
# gesture GRU on the bundled 60-step BasicMotions accelerometer data, init vs
# FC only vs FC+GRU, staged through a project file.
project() {  # file, staging JSON
  cat >"$1" <<JSON
{"format": "gru-workbench-project", "version": 1,
 "model": "$samples/gesture_gru_fused.tflite",
 "dataset": "$samples/BasicMotionsAcc60_TRAIN.ts",
 "sections": {"training": {"staging": $2}}}
JSON
}
stages=$XDG_CONFIG_HOME/stages.gruwb
project "$stages" '{"name": "gesture", "model": "'"$samples"'/gesture_gru_fused.tflite",
  "dataset": "'"$samples"'/BasicMotionsAcc60_TRAIN.ts", "stages": ["init", "fc", "all"],
  "optimizer": "adam", "learning_rate": 0.005, "batch_size": 8, "epochs": 15}'
# Two experiments (--run twice: "gesture" and "gesture 2", the next seed), so the run list has rows to manage.
shot training_curves "$stages" --run --run --dock curves
# Every run of both experiments in the HParams table (settings and figures, sortable, CSV).
shot training_hparams "$stages" --run --run --dock hparams
shot training_gradients "$stages" --run --dock gradients
shot training_comparison "$stages" --run --dock comparison
shot training_experiments "$stages" --run --dock experiments
# Cell comparison: GRU, LSTM and SimpleRNN built for the data, same stages.
cells=$XDG_CONFIG_HOME/cells.gruwb
project "$cells" '{"name": "cells", "build": "cell=gru,units=16",
  "dataset": "'"$samples"'/BasicMotionsAcc60_TRAIN.ts", "stages": ["fc", "all"],
  "optimizer": "adam", "learning_rate": 0.01, "batch_size": 8, "epochs": 10,
  "compare_cells": ["gru", "lstm", "rnn"]}'
shot training_cells "$cells" --run --dock comparison
