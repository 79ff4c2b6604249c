#!/usr/bin/env bash
#===- setup.sh - Install Lethe's dependencies, configure and build --------===#
#
# Run once on a fresh Debian bookworm machine (as root, or as a user with
# sudo). Installs every package Lethe needs from Debian's archive, configures
# the build in ./build (Ninja, lld, Release) and builds everything. Running it
# again installs nothing new and rebuilds only what changed.
#
# Environment: LETHE_BUILD_DIR (default: build), LETHE_BUILD_TYPE (Release).
#
#===----------------------------------------------------------------------===#
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${LETHE_BUILD_DIR:-$root/build}
build_type=${LETHE_BUILD_TYPE:-Release}

packages=(
  # Toolchain.
  cmake ninja-build g++ lld
  # MLIR/LLVM 22: all four are needed, libmlir-22-dev pulls in none of the rest.
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools
  # ONNX import: ONNX 1.12 and protobuf.
  libonnx-dev libprotobuf-dev protobuf-compiler
  # Device profiles, plans and planning problems: JSON.
  nlohmann-json3-dev
  # The milp planning strategy: the CBC MILP solver (found with pkg-config).
  coinor-libcbc-dev
  # Tests: GoogleTest; lit and the Python helpers run on Debian's python3;
  # ONNX's conformance data.
  libgtest-dev python3 python3-onnx python3-numpy libonnx-testdata
  # lethe-mem: python -m lethe.plot draws with matplotlib; a test renders
  # the HTML timeline in headless Chromium.
  python3-matplotlib chromium
)

step() { printf '==> %s\n' "$*"; }

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null |
      grep -q 'install ok installed'; then
    missing+=("$package")
  fi
done

if ((${#missing[@]})); then
  step "installing ${#missing[@]} Debian packages: ${missing[*]}"
  sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || {
      echo "setup.sh: not root and no sudo; install as root: ${missing[*]}" >&2
      exit 1
    }
    sudo=(sudo)
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  step "all ${#packages[@]} Debian packages already installed"
fi

if [[ ! -f $build_dir/build.ninja ]]; then
  step "configuring $build_type build in $build_dir"
  cmake -G Ninja -S "$root" -B "$build_dir" \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DCMAKE_BUILD_TYPE="$build_type" \
    -DLLVM_USE_LINKER=lld \
    -DPython3_EXECUTABLE=/usr/bin/python3
else
  step "build directory $build_dir already configured"
fi

step "building (ninja -C $build_dir)"
cmake --build "$build_dir"
step "done: tools are in $build_dir/bin"
