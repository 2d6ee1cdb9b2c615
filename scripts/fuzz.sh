#!/usr/bin/env bash
# Runs the libFuzzer targets of fuzz/ (docs/FUZZING.md), one process at a time.
# Usage: scripts/fuzz.sh [--fast] [TARGET|all] [SECONDS]     (default: all, 60 s per target)
#
# Configures the clang ASan + UBSan + libFuzzer build (-DKVSTREAM_FUZZ=ON, torch-free) in
# $KVSTREAM_FUZZ_BUILD_DIR (default build/fuzz) unless it is one already, builds the targets and the
# seed generator, writes the seeds into BUILD/fuzz-seeds/, then runs each target for SECONDS with
# its dictionary, starting from the committed inputs of fixed findings in fuzz/regressions/<target>/.
# New inputs accumulate in BUILD/fuzz-corpus/<target>/ (kept between runs); logs go to
# BUILD/fuzz-logs/<target>.log; a crash, sanitizer report, timeout (-timeout) or out-of-memory
# (-rss_limit_mb) input is kept in BUILD/crashes/<target>/. Prints executions, coverage and the
# outcome per target, and exits 1 when any target found something.
#
# --fast (or KVSTREAM_FUZZ_FAST=1): the throughput mode. The targets run from the build without ASan
# (UBSan and coverage only; scripts/configure-fuzz-build.sh --fast), in $KVSTREAM_FUZZ_BUILD_DIR
# (default build/fuzz-fast), several times faster; after each target, its whole corpus, its seeds
# and its regression inputs are replayed once (-runs=0) by the ASan + UBSan target of
# $KVSTREAM_FUZZ_ASAN_BUILD_DIR (default build/fuzz, configured and built when needed), so every
# kept input is also checked under ASan (log BUILD/fuzz-logs/<target>.asan-replay.log, findings in
# ASAN_BUILD/crashes/<target>/). A finding of either fails the run.
#
# The path-taking parsers read the input from a scratch file in $TMPDIR, which is set to /dev/shm
# (tmpfs) when it exists. KVSTREAM_FUZZ_JOBS: build jobs (default 2).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
fast=${KVSTREAM_FUZZ_FAST:-0}
if [ "${1:-}" = --fast ]; then fast=1; shift; fi
if [ "$fast" = 1 ]; then
  build=${KVSTREAM_FUZZ_BUILD_DIR:-$repo/build/fuzz-fast}
  asan_build=${KVSTREAM_FUZZ_ASAN_BUILD_DIR:-$repo/build/fuzz}
  [ "$(realpath -m "$build")" != "$(realpath -m "$asan_build")" ] ||
    { echo "fuzz.sh: --fast needs a build folder of its own, not the ASan build $asan_build" >&2; exit 2; }
else
  build=${KVSTREAM_FUZZ_BUILD_DIR:-$repo/build/fuzz}
fi
which=${1:-all}
seconds=${2:-60}
jobs=${KVSTREAM_FUZZ_JOBS:-2}
readonly timeout_s=10 rss_limit_mb=2048

targets=()
for source in "$repo"/fuzz/fuzz_*.cpp; do
  name=$(basename "$source" .cpp)
  [ "$name" = fuzz_support ] || targets+=("${name#fuzz_}")
done
if [ "$which" != all ]; then
  [ -f "$repo/fuzz/fuzz_$which.cpp" ] || { echo "fuzz.sh: unknown target '$which' (targets: ${targets[*]})" >&2; exit 2; }
  targets=("$which")
fi

# ON or OFF: whether DIR is a fuzz build with ASan; nothing when it is no fuzz build.
asan_of() {
  grep -qs '^KVSTREAM_FUZZ:BOOL=ON' "$1/CMakeCache.txt" || return 0
  local asan
  asan=$(sed -nE 's/^KVSTREAM_FUZZ_ASAN:BOOL=(.*)/\1/p' "$1/CMakeCache.txt")
  echo "${asan:-ON}"
}
# Configures DIR as the fuzz build with ASan ON or OFF unless it is that already; builds the targets.
build_targets() {
  local dir=$1 asan=$2
  if [ "$(asan_of "$dir")" != "$asan" ]; then
    if [ "$asan" = ON ]; then bash "$repo/scripts/configure-fuzz-build.sh" "$dir"
    else bash "$repo/scripts/configure-fuzz-build.sh" "$dir" --fast; fi
  fi
  cmake --build "$dir" --target fuzz -j "$jobs" > "$dir/fuzz-build.log" 2>&1 || { tail -50 "$dir/fuzz-build.log"; exit 1; }
}
if [ "$fast" = 1 ]; then
  build_targets "$build" OFF
  build_targets "$asan_build" ON
else
  build_targets "$build" ON
fi

rm -rf "$build/fuzz-seeds"
"$build/fuzz/fuzz_seeds" "$repo" "$build/fuzz-seeds"

if [ -d /dev/shm ] && [ -w /dev/shm ]; then export TMPDIR=/dev/shm; fi
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
mkdir -p "$build/fuzz-logs"
failed=()
printf '%-18s %12s %10s %8s %8s %8s  %s\n' target executions exec/s cov ft corpus outcome
for target in "${targets[@]}"; do
  corpus=$build/fuzz-corpus/$target
  crashes=$build/crashes/$target
  log=$build/fuzz-logs/$target.log
  mkdir -p "$corpus" "$crashes" "$build/fuzz-seeds/$target"
  outcome=clean
  # Inputs of fixed findings (fuzz/regressions/<target>/, committed) run first, every time.
  regressions=()
  if [ -d "$repo/fuzz/regressions/$target" ]; then regressions=("$repo/fuzz/regressions/$target"); fi
  "$build/fuzz/fuzz_$target" "$corpus" "$build/fuzz-seeds/$target" "${regressions[@]}" -dict="$repo/fuzz/$target.dict" \
    -max_total_time="$seconds" -timeout=$timeout_s -rss_limit_mb=$rss_limit_mb -print_final_stats=1 \
    -artifact_prefix="$crashes/" > "$log" 2>&1 || { outcome="FINDING (rc $?): $(ls -t "$crashes" | head -1)"; failed+=("$target"); }
  if [ "$fast" = 1 ]; then
    # Every kept input once through the ASan + UBSan target (-runs=0: execute the inputs, no mutation).
    replay_log=$build/fuzz-logs/$target.asan-replay.log
    asan_crashes=$asan_build/crashes/$target
    mkdir -p "$asan_crashes"
    if "$asan_build/fuzz/fuzz_$target" "$corpus" "$build/fuzz-seeds/$target" "${regressions[@]}" -runs=0 \
         -timeout=$timeout_s -rss_limit_mb=$rss_limit_mb -print_final_stats=1 -artifact_prefix="$asan_crashes/" \
         > "$replay_log" 2>&1; then
      outcome+="; ASan replay of $(sed -nE 's/^stat::number_of_executed_units: ([0-9]+)/\1/p' "$replay_log") inputs clean"
    else
      outcome+="; ASan replay FINDING (rc $?): $(ls -t "$asan_crashes" | head -1)"
      [[ " ${failed[*]} " == *" $target "* ]] || failed+=("$target")
    fi
  fi
  # libFuzzer's last status line "#N <event> cov: C ft: F corp: K/..." and its final statistics.
  status=$(grep -E '^#[0-9]+\s' "$log" | tail -1 || true)
  field() { sed -nE "s/.* $1: ([0-9]+).*/\1/p" <<< "$status"; }
  executions=$(sed -nE 's/^stat::number_of_executed_units: ([0-9]+)/\1/p' "$log")
  rate=$(sed -nE 's/^stat::average_exec_per_sec: +([0-9]+)/\1/p' "$log")
  printf '%-18s %12s %10s %8s %8s %8s  %s\n' "$target" "${executions:-?}" "${rate:-?}" "$(field cov)" "$(field ft)" \
    "$(sed -nE 's/.* corp: ([0-9]+).*/\1/p' <<< "$status")" "$outcome"
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz.sh: findings in ${failed[*]}: inputs in $build/crashes/${asan_build:+ and $asan_build/crashes/}, logs in $build/fuzz-logs/" >&2
  exit 1
fi
