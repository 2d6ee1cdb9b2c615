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
build=$(realpath -m "$2")
suites=(test_common test_codec test_traces test_sim test_experiments test_cli)

bash "$repo/scripts/configure-fuzz-build.sh" "$build"
cmake --build "$build" --target kvstream "${suites[@]}" fuzz -j "$(nproc)" > "$build.build.log" 2>&1 ||
  { tail -50 "$build.build.log"; exit 1; }

source "$repo/tests/sanitizers/sanitizer_options.sh"
# The suites run $(nproc) at a time, the longest first: test_cli (~7 minutes under ASan) in two shards.
jobs=(test_cli:0/2 test_cli:1/2)
for suite in "${suites[@]}"; do [ "$suite" = test_cli ] || jobs+=("$suite"); done
run_job() {  # SUITE or SUITE:SHARD/SHARDS
  local suite=${1%%:*} shard=0 shards=1 log=$build/${1//[:\/]/.}.log
  if [[ $1 == *:* ]]; then shard=${1#*:} shards=${shard#*/} shard=${shard%/*}; fi
  if ! (cd "$build/tests" && GTEST_SHARD_INDEX=$shard GTEST_TOTAL_SHARDS=$shards "./$suite" --gtest_brief=1 > "$log" 2>&1); then
    tail -40 "$log"
    echo "FAILED: $1" > "$log.failed"
  fi
}
export -f run_job
export build
rm -f "$build"/*.failed
printf '%s\n' "${jobs[@]}" | xargs -P "$(nproc)" -I{} bash -c 'run_job {}'
failed=$(cat "$build"/*.failed 2> /dev/null || true)
if [ -n "$failed" ]; then echo "sanitized unit tests: $failed" >&2; exit 1; fi
echo "sanitized unit tests: passed (${suites[*]})"
