#!/usr/bin/env bash
# Runs the libFuzzer targets of fuzz/ (docs/FUZZING.md), one process at a time.
# Usage: scripts/fuzz.sh [TARGET|all] [SECONDS]     (default: all, 60 s per target)
#
# Configures the clang ASan + UBSan + libFuzzer build (-DKVSTREAM_FUZZ=ON, torch-free) in
# $KVSTREAM_FUZZ_BUILD_DIR (default build/fuzz) unless it is one already, builds the targets and the
# seed generator, writes the seeds into BUILD/fuzz-seeds/, then runs each target for SECONDS with
# its dictionary, starting from the committed inputs of fixed findings in fuzz/regressions/<target>/. New inputs accumulate in BUILD/fuzz-corpus/<target>/ (kept between runs); logs go
# to BUILD/fuzz-logs/<target>.log; a crash, sanitizer report, timeout (-timeout) or out-of-memory
# (-rss_limit_mb) input is kept in BUILD/crashes/<target>/. Prints executions, coverage and the
# outcome per target, and exits 1 when any target found something.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${KVSTREAM_FUZZ_BUILD_DIR:-$repo/build/fuzz}
which=${1:-all}
seconds=${2:-60}
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

if ! grep -qs '^KVSTREAM_FUZZ:BOOL=ON' "$build/CMakeCache.txt"; then bash "$repo/scripts/configure-fuzz-build.sh" "$build"; fi
cmake --build "$build" --target fuzz -j 2 > "$build/fuzz-build.log" 2>&1 || { tail -50 "$build/fuzz-build.log"; exit 1; }

rm -rf "$build/fuzz-seeds"
"$build/fuzz/fuzz_seeds" "$repo" "$build/fuzz-seeds"

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
  # libFuzzer's last status line "#N <event> cov: C ft: F corp: K/..." and its final statistics.
  status=$(grep -E '^#[0-9]+\s' "$log" | tail -1 || true)
  field() { sed -nE "s/.* $1: ([0-9]+).*/\1/p" <<< "$status"; }
  executions=$(sed -nE 's/^stat::number_of_executed_units: ([0-9]+)/\1/p' "$log")
  rate=$(sed -nE 's/^stat::average_exec_per_sec: +([0-9]+)/\1/p' "$log")
  printf '%-18s %12s %10s %8s %8s %8s  %s\n' "$target" "${executions:-?}" "${rate:-?}" "$(field cov)" "$(field ft)" \
    "$(sed -nE 's/.* corp: ([0-9]+).*/\1/p' <<< "$status")" "$outcome"
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz.sh: findings in ${failed[*]}: inputs in $build/crashes/, logs in $build/fuzz-logs/" >&2
  exit 1
fi
