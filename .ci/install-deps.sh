#!/usr/bin/env bash
# Installs everything GRU Workbench needs to build, test, cross-compile and fuzz on Debian 12.
# Idempotent: when every package is already installed it returns at once without touching apt.
set -euo pipefail

packages=(
  # build
  cmake ninja-build g++ ccache
  # GUI and libraries
  qt6-base-dev qt6-svg-dev libgl-dev libqcustomplot-dev libserialport-dev zlib1g-dev
  libflatbuffers-dev flatbuffers-compiler
  # tests and benchmarks
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  # fuzzing (libFuzzer + ASan/UBSan runtimes)
  clang-14 libclang-rt-14-dev
  # Cortex-M4F portability check
  gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib
  # the board firmware under emulation (serial/, docs/firmware.md)
  qemu-system-arm
  # `gruwb board flash` (the tests run them with no board plugged in)
  openocd stlink-tools stm32flash
  # headless GUI runs and screenshots
  xvfb xauth imagemagick
  # `gruwb sweep --slurm` on a one-node cluster (tests/app/sweep_slurm_test.sh); jq compares results
  slurmctld slurmd slurm-client munge jq
  # the installed-package test (tests/packaging/installed_package_test.sh): the clean Debian root
  # it installs the package into, and gio reads MIME types
  lintian appstream libglib2.0-bin mmdebstrap
)

# One dpkg-query for all packages keeps re-runs fast; "ii" = installed and configured.
installed=$(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' "${packages[@]}" 2>/dev/null |
  awk '$2 == "ii" {print $1}' || true)
missing=()
for package in "${packages[@]}"; do
  grep -qxF "$package" <<<"$installed" || missing+=("$package")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: not root and no sudo; install: ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
# `env` rather than export: sudo drops the caller's environment.
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
