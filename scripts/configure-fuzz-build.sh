#!/usr/bin/env bash
# Configures BUILD_DIR as the torch-free clang build with ASan + UBSan and the libFuzzer targets
# (-DKVSTREAM_FUZZ=ON; docs/FUZZING.md): the build of both the sanitized unit tests
# (tests/sanitizers/sanitized_unit_tests.sh) and scripts/fuzz.sh. A folder configured earlier with
# GCC (the sanitized build before it moved to clang) is removed first: CMake cannot switch compilers.
# Usage: configure-fuzz-build.sh BUILD_DIR     (the log goes to BUILD_DIR.configure.log)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$1
if [ -f "$build/CMakeCache.txt" ] && ! grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang++' "$build/CMakeCache.txt"; then
  rm -rf "$build"
fi
generator=()
if command -v ninja > /dev/null; then generator=(-G Ninja); fi
mkdir -p "$(dirname "$build")"
CC=clang CXX=clang++ cmake "${generator[@]}" -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWITH_TORCH=OFF \
  -DWITH_CUDA=OFF -DKVSTREAM_SANITIZE=ON -DKVSTREAM_FUZZ=ON -DKVSTREAM_WERROR=OFF > "$build.configure.log" 2>&1 ||
  { cat "$build.configure.log"; exit 1; }
