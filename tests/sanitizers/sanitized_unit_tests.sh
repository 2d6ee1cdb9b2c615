#!/usr/bin/env bash
# The unit tests under AddressSanitizer and UndefinedBehaviorSanitizer: configures the torch-free
# build (-DWITH_TORCH=OFF -DWITH_CUDA=OFF, what every parser and the simulator are) with clang and
# -DKVSTREAM_FUZZ=ON (ASan + UBSan, and libFuzzer's coverage instrumentation) into BUILD_DIR, builds
# the suites of the modules that need no model and the fuzz targets (docs/FUZZING.md; the ctest
# fuzz.smoke runs them from this build), and runs the suites; any report (a leak included) fails.
# Warnings are not errors here: the sanitizers make compilers warn inside libstdc++'s <regex>.
# Usage: sanitized_unit_tests.sh REPOSITORY BUILD_DIR
set -euo pipefail
repo=$1
build=$2
suites=(test_common test_codec test_traces test_sim test_experiments test_cli)

bash "$repo/scripts/configure-fuzz-build.sh" "$build"
cmake --build "$build" --target kvstream "${suites[@]}" fuzz -j "$(nproc)" > "$build.build.log" 2>&1 ||
  { tail -50 "$build.build.log"; exit 1; }

export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
failed=()
for suite in "${suites[@]}"; do
  if ! (cd "$build/tests" && "./$suite" --gtest_brief=1 > "$build/$suite.log" 2>&1); then
    failed+=("$suite")
    tail -40 "$build/$suite.log"
  fi
done
if [ ${#failed[@]} -gt 0 ]; then echo "sanitized unit tests: FAILED: ${failed[*]}" >&2; exit 1; fi
echo "sanitized unit tests: passed (${suites[*]})"
