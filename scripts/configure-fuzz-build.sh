#!/usr/bin/env bash
# Configures BUILD_DIR as the torch-free clang build with ASan + UBSan and the libFuzzer targets
# (-DKVSTREAM_FUZZ=ON; docs/FUZZING.md): the build of both the sanitized unit tests
# (tests/sanitizers/sanitized_unit_tests.sh) and scripts/fuzz.sh. A folder configured earlier with
# GCC (the sanitized build before it moved to clang) is removed first: CMake cannot switch compilers.
# With --fast it configures the throughput build of scripts/fuzz.sh --fast instead: the same
# targets with UBSan and coverage but without ASan (-DKVSTREAM_FUZZ_ASAN=OFF), and no test suites.
# Usage: configure-fuzz-build.sh BUILD_DIR [--fast]     (the log goes to BUILD_DIR.configure.log)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$1
mode=(-DKVSTREAM_SANITIZE=ON -DKVSTREAM_FUZZ_ASAN=ON -DKVSTREAM_BUILD_TESTS=ON)
if [ "${2:-}" = --fast ]; then mode=(-DKVSTREAM_SANITIZE=OFF -DKVSTREAM_FUZZ_ASAN=OFF -DKVSTREAM_BUILD_TESTS=OFF); fi
if [ -f "$build/CMakeCache.txt" ] && ! grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang++' "$build/CMakeCache.txt"; then
  rm -rf "$build"
fi
generator=()
if command -v ninja > /dev/null; then generator=(-G Ninja); fi
mkdir -p "$(dirname "$build")"
CC=clang CXX=clang++ cmake "${generator[@]}" -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWITH_TORCH=OFF \
  -DWITH_CUDA=OFF "${mode[@]}" -DKVSTREAM_FUZZ=ON -DKVSTREAM_WERROR=OFF > "$build.configure.log" 2>&1 ||
  { cat "$build.configure.log"; exit 1; }
