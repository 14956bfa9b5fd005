#!/usr/bin/env bash
# Installs, with apt-get, the Debian packages attn-mlir builds and tests with.
# Does nothing when they are all present.
set -euo pipefail

packages=(
  cmake ninja-build ccache g++ python3
  clang-22 libclang-rt-22-dev
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  libgtest-dev nlohmann-json3-dev
  mpich libmpich-dev
  python3-dev pybind11-dev python3-numpy python3-pytest python3-torch
  python3-matplotlib python3-venv
)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "Installing: ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -q
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
