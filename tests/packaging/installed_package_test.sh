#!/usr/bin/env bash
# The Debian package as a user gets it (issue 22):
#   tests/packaging/installed_package_test.sh [--unpack] build-pkg/gru-workbench_<version>_amd64.deb
# Installs it with apt into a clean Debian 12 root (mmdebstrap: Essential packages, then the
# package with the dependencies it declares, and xvfb) and runs installed_programs_test.sh
# there: the programs as installed in /usr, with only what the package depends on. --unpack
# (no root, or no Debian mirror) unpacks it with dpkg-deb -x instead and runs them from there.
# Then checks, from outside: files in place, programs stripped, the man pages, the bash
# completion, the MIME definitions, the .desktop file, the AppStream metainfo (appstreamcli
# validate) and lintian: any E: fails. The GUI's screenshot is kept beside the package
# (installed-screenshot.png). Prints one line per check; exits 1 at the first failure, 2 for
# bad usage. The root's packages are kept in $GRUWB_PACKAGE_TEST_DEBS (default
# ~/.cache/gru-workbench/package-test-debs), so later runs download only what changed.
set -euo pipefail

mode=clean-root
if [[ ${1:-} == --unpack ]]; then
  mode=unpack
  shift
fi
deb=${1:-}
if [[ -z $deb || ! -f $deb ]]; then
  echo "usage: $0 [--unpack] PACKAGE.deb" >&2
  exit 2
fi
deb=$(realpath "$deb")
here=$(dirname "$(realpath "$0")")
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
ok() { echo "ok: $*"; }

root=$(mktemp -d)
log=$(mktemp)
trap 'rm -rf --one-file-system "$root" "$log"' EXIT
version=$(dpkg-deb -f "$deb" Version)
installed_kb=$(dpkg-deb -f "$deb" Installed-Size)
ok "$(basename "$deb"): $(stat -c %s "$deb") bytes, installed $installed_kb KiB"

if [[ $mode == clean-root ]]; then
  [[ $(id -u) == 0 ]] || fail "a clean root needs root (mmdebstrap, chroot); --unpack runs without"
  command -v mmdebstrap >/dev/null || fail "mmdebstrap missing (apt install mmdebstrap); --unpack runs without"
  debs=${GRUWB_PACKAGE_TEST_DEBS:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/gru-workbench/package-test-debs}
  mkdir -p "$debs"
  start=$SECONDS
  # Debian's mirrors as apt has them here; dpkg without fsync (the root is thrown away); the
  # automount hook puts the .deb at the same path inside, where dpkg (chrooted) reads it.
  mmdebstrap --variant=essential --dpkgopt=force-unsafe-io --skip=essential/unlink \
    --hook-dir=/usr/share/mmdebstrap/hooks/file-mirror-automount \
    --setup-hook='mkdir -p "$1"/var/cache/apt/archives/' \
    --setup-hook="sync-in $debs /var/cache/apt/archives/" \
    --customize-hook="sync-out /var/cache/apt/archives $debs" \
    --include="$deb" --include=xvfb,xauth bookworm "$root" >"$log" 2>&1 ||
    fail "mmdebstrap could not install the package into a clean root: $( (grep -E '^E:' "$log" || tail -3 "$log") | head -3)"
  rm -f "$debs"/gru-workbench_*.deb  # Debian's packages only: ours changes every build
  ok "installed with its dependencies into a clean Debian 12 root ($((SECONDS - start)) s, $(du -sm "$root" | cut -f1) MB)"
  # The checks run in the root: its own /proc (the programs find their files from
  # /proc/self/exe) and the host's /dev (ptys for board-sim), in a mount namespace of their own
  # so nothing stays mounted after.
  cp "$here/installed_programs_test.sh" "$root/installed_programs_test.sh"
  mkdir -m 700 "$root/tmp/runtime"
  unshare --mount --pid --fork --kill-child -- bash -c '
    mount -t proc proc "$0/proc" && mount --rbind /dev "$0/dev" &&
    exec chroot "$0" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/root LANG=C.UTF-8 \
      XDG_RUNTIME_DIR=/tmp/runtime bash /installed_programs_test.sh /usr "$1" /tmp/work' \
    "$root" "$version" || fail "the installed programs (above)"
  work=$root/tmp/work
else
  dpkg-deb -x "$deb" "$root"
  # The user's own plugins and settings stay out of it.
  export HOME=$root/home XDG_DATA_HOME=$root/home/data XDG_CONFIG_HOME=$root/home/config
  export XDG_RUNTIME_DIR=$root/run
  mkdir -p "$HOME" && mkdir -m 700 "$XDG_RUNTIME_DIR"
  work=$root/work
  bash "$here/installed_programs_test.sh" "$root/usr" "$version" "$work" ||
    fail "the installed programs (above)"
fi
cp "$work/gui.png" "$(dirname "$deb")/installed-screenshot.png"

usr=$root/usr
gruwb=$usr/bin/gruwb
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

# A man page for gruwb, each command `gruwb --help` lists, and gru-workbench; groff quiet.
commands=$("$gruwb" --help | sed -n '/^Commands:/,/^$/p' | awk 'NF > 1 {print $1}')
for command in $commands; do
  [[ -e $usr/share/man/man1/gruwb-$command.1.gz ]] || fail "no man page for gruwb $command"
done
pages=("$usr"/share/man/man1/gruwb-*.1.gz)
[[ ${#pages[@]} == $(wc -w <<<"$commands") ]] || fail "${#pages[@]} gruwb-COMMAND man pages for $(wc -w <<<"$commands") commands"
for page in "$usr"/share/man/man1/{gruwb,gruwb-*,gru-workbench}.1.gz; do
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
