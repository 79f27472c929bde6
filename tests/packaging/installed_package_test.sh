#!/usr/bin/env bash
# The Debian package as a user gets it (issue 22):
#   tests/packaging/installed_package_test.sh build-pkg/gru-workbench_<version>_amd64.deb
# Unpacks it into a temporary root (dpkg-deb -x: a chroot would take minutes), then runs the
# installed programs from there: gruwb --version against the package version, inspect on an
# installed sample, a one-epoch experiment, the installed plugins found next to the binary,
# the GUI taking a screenshot (under Xvfb when there is one). Checks the man pages, the bash
# completion, the MIME definitions, the .desktop file and the AppStream metainfo
# (appstreamcli validate), and runs lintian: any E: fails.
# Prints one line per check; exits 1 at the first failure, 2 for bad usage.
set -euo pipefail

deb=${1:-}
if [[ -z $deb || ! -f $deb ]]; then
  echo "usage: $0 PACKAGE.deb" >&2
  exit 2
fi
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
ok() { echo "ok: $*"; }

dpkg-deb -x "$deb" "$root"
version=$(dpkg-deb -f "$deb" Version)
installed_kb=$(dpkg-deb -f "$deb" Installed-Size)
ok "unpacked $(basename "$deb"): $(stat -c %s "$deb") bytes, installed $installed_kb KiB"

usr=$root/usr
gruwb=$usr/bin/gruwb
# The user's own plugins and settings stay out of it.
export HOME=$root/home XDG_DATA_HOME=$root/home/data XDG_CONFIG_HOME=$root/home/config
export XDG_RUNTIME_DIR=$root/run
mkdir -p "$HOME" && mkdir -m 700 "$XDG_RUNTIME_DIR"
work=$root/work
mkdir -p "$work"

for file in bin/gruwb bin/gru-workbench share/applications/gru-workbench.desktop \
  share/mime/packages/gru-workbench.xml share/icons/hicolor/scalable/apps/gru-workbench.svg \
  share/icons/hicolor/48x48/apps/gru-workbench.png share/icons/hicolor/256x256/apps/gru-workbench.png \
  share/bash-completion/completions/gruwb share/man/man1/gruwb.1.gz \
  share/man/man1/gru-workbench.1.gz share/doc/gru-workbench/copyright \
  share/doc/gru-workbench/changelog.gz share/gru-workbench/samples/gesture_gru_fused.tflite; do
  [[ -e $usr/$file ]] || fail "the package has no /usr/$file"
done
ok "installed files in place"

# Stripped: no debug sections left in the programs.
for program in gruwb gru-workbench; do
  if objdump -h "$usr/bin/$program" | grep -q '\.debug_'; then fail "$program is not stripped"; fi
done
ok "programs stripped ($(stat -c %s "$gruwb") and $(stat -c %s "$usr/bin/gru-workbench") bytes)"

[[ $("$gruwb" --version) == "gruwb $version" ]] || fail "gruwb --version says '$("$gruwb" --version)', the package '$version'"
ok "gruwb --version: $version"

"$gruwb" inspect "$usr/share/gru-workbench/samples/gesture_gru_fused.tflite" >"$work/inspect.txt" ||
  fail "gruwb inspect on the installed sample"
grep -q "Subgraph#0" "$work/inspect.txt" || fail "gruwb inspect printed no subgraph"
ok "gruwb inspect on an installed sample"

"$gruwb" experiment --build cell=gru,units=4 --data "$usr/share/gru-workbench/samples/BasicMotions_TRAIN.ts" \
  --stages init,fc --epochs 1 --json "$work/experiment.json" >"$work/experiment.txt" ||
  fail "gruwb experiment: $(tail -1 "$work/experiment.txt")"
grep -q '"stages"' "$work/experiment.json" || fail "gruwb experiment wrote no stages"
ok "gruwb experiment (one epoch on the installed BasicMotions sample)"

# Plugins installed beside the programs are found from there (app/core/plugin_manager.cpp).
for plugin in "$usr"/lib/gru-workbench/plugins/*.so; do
  name=$(basename "$plugin" .so)
  "$gruwb" plugins | grep -qF "path: $plugin" || fail "gruwb plugins did not load the installed $name"
done
ok "gruwb plugins lists the installed plugins"

# A package built with GRUWB_FIRMWARE_IMAGES=ON: `gruwb board flash` finds each installed image
# (share/gru-workbench/firmware/BOARD) from the installed binary; boards without a flashing
# tool (QEMU only) just need their image and manifest.
firmware=$usr/share/gru-workbench/firmware
if [[ -d $firmware ]]; then
  boards=0
  for folder in "$firmware"/*/; do
    board=$(basename "$folder")
    [[ -f $folder/gruwb_fw_$board.elf && -f $folder/gruwb_fw_$board.json ]] ||
      fail "firmware/$board has no image or manifest"
    if ! grep -q '"tools": \[\]' "$folder/gruwb_fw_$board.json"; then
      "$gruwb" board flash --board "$board" --dry-run >"$work/flash.txt" 2>&1 ||
        fail "gruwb board flash --board $board --dry-run: $(tail -1 "$work/flash.txt")"
      grep -qF "$folder" "$work/flash.txt" || grep -qF "${folder%/}" "$work/flash.txt" ||
        fail "gruwb board flash --board $board does not use the installed image"
    fi
    boards=$((boards + 1))
  done
  ok "firmware images of $boards boards, found by gruwb board flash"
else
  echo "note: no firmware images in the package (built without GRUWB_FIRMWARE_IMAGES=ON)"
fi

gui=("$usr/bin/gru-workbench" --screenshot "$work/gui.png" --size 1024x700
  "$usr/share/gru-workbench/samples/gesture_gru_fused.tflite")
if command -v xvfb-run >/dev/null; then
  QT_QPA_PLATFORM=xcb xvfb-run -a "${gui[@]}" || fail "gru-workbench under Xvfb"
  platform=Xvfb
else
  QT_QPA_PLATFORM=offscreen "${gui[@]}" || fail "gru-workbench (offscreen)"
  platform=offscreen
fi
[[ -s $work/gui.png ]] || fail "gru-workbench wrote no screenshot"
ok "gru-workbench screenshot ($platform, $(stat -c %s "$work/gui.png") bytes)"

# A man page for gruwb, each command `gruwb --help` lists, and gru-workbench; groff quiet.
commands=$("$gruwb" --help | sed -n '/^Commands:/,/^$/p' | awk 'NF > 1 {print $1}')
for command in $commands; do
  [[ -e $usr/share/man/man1/gruwb-$command.1.gz ]] || fail "no man page for gruwb $command"
done
pages=("$usr"/share/man/man1/gruwb-*.1.gz)
[[ ${#pages[@]} == $(wc -w <<<"$commands") ]] || fail "${#pages[@]} gruwb-COMMAND man pages for $(wc -w <<<"$commands") commands"
for page in "$usr"/share/man/man1/*.1.gz; do
  warnings=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$page" 2>&1 >/dev/null) ||
    fail "man cannot format $(basename "$page")"
  [[ -z $warnings ]] || fail "$(basename "$page"): $warnings"
done
ok "man pages for gruwb, its $(wc -w <<<"$commands") commands and gru-workbench"

# Completion: commands after gruwb, options after a command, board actions.
complete_words() {
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _gruwb; echo "${COMPREPLY[*]}"' \
    _ "$usr/share/bash-completion/completions/gruwb" "$@"
}
[[ " $(complete_words gruwb ins) " == *" inspect "* ]] || fail "completion of 'gruwb ins'"
[[ " $(complete_words gruwb inspect --) " == *" --json "* ]] || fail "completion of 'gruwb inspect --'"
[[ " $(complete_words gruwb board f) " == *" flash "* ]] || fail "completion of 'gruwb board f'"
ok "bash completion"

mkdir -p "$work/share"
cp -r "$usr/share/mime" "$work/share/mime"
XDG_DATA_DIRS=$work/share:/usr/share update-mime-database "$work/share/mime" 2>&1 | { ! grep .; } ||
  fail "update-mime-database complains"
for type in x-tflite x-circle x-gru-workbench-project; do
  [[ -e $work/share/mime/application/$type.xml ]] || fail "no MIME type application/$type"
  grep -q "application/$type" "$usr/share/applications/gru-workbench.desktop" ||
    fail "the .desktop file does not open application/$type"
done
# The magic, not the name: a renamed model is still recognised (gio reads the database).
if command -v gio >/dev/null; then
  samples=$usr/share/gru-workbench/samples
  cp "$samples/gesture_gru_fused.tflite" "$work/model-a.bin"
  cp "$samples/gesture_gru.circle" "$work/model-b.bin"
  for pair in model-a.bin:x-tflite model-b.bin:x-circle; do
    type=$(XDG_DATA_DIRS=$work/share:/usr/share gio info -a standard::content-type "$work/${pair%%:*}" |
      awk '/content-type/ {print $2}')
    [[ $type == "application/${pair#*:}" ]] || fail "${pair%%:*} is $type, not application/${pair#*:}"
  done
fi
ok "MIME types (magic TFL3/CIR0) and .desktop association"
if command -v desktop-file-validate >/dev/null; then
  desktop-file-validate "$usr/share/applications/gru-workbench.desktop" || fail "desktop-file-validate"
  ok "desktop-file-validate"
fi

metainfo=$(ls "$usr"/share/metainfo/*.metainfo.xml)
appstreamcli validate --no-net "$metainfo" >"$work/appstream.txt" 2>&1 ||
  fail "appstreamcli validate: $(cat "$work/appstream.txt")"
ok "appstreamcli validate --no-net $(basename "$metainfo")"

lintian --tag-display-limit 0 "$deb" >"$work/lintian.txt" 2>&1 || true
if grep -q '^E:' "$work/lintian.txt"; then
  fail "lintian errors:
$(grep '^E:' "$work/lintian.txt")"
fi
ok "lintian: no errors ($(grep -c '^W:' "$work/lintian.txt") warnings)"
grep '^W:' "$work/lintian.txt" || true
