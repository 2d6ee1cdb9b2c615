#!/usr/bin/env bash
# The build without LibTorch (docs/ARCHITECTURE.md §8), end to end: checks that BUILD_DIR's `kvstream`
# links no LibTorch, then runs what it must do: simulate on a synthetic profile; run on a config of
# context-profile files, in two shards; merge them into the single run's files; and say that the
# model commands need LibTorch. BUILD_DIR is a torch-free build made before (ctest gives it the
# sanitized build of tests/sanitizers/, so this also runs under ASan + UBSan); with extra CMake
# arguments instead of --built, it configures and builds `kvstream` with -DWITH_TORCH=OFF there first.
# Usage: without_torch.sh REPOSITORY BUILD_DIR (--built | [extra CMake arguments])
set -euo pipefail
repo=$1
build=$2
shift 2

if [ "${1:-}" = --built ]; then
  grep -q '^WITH_TORCH:BOOL=OFF' "$build/CMakeCache.txt" ||
    { echo "without_torch: $build is not a build with -DWITH_TORCH=OFF" >&2; exit 1; }
  source "$repo/tests/sanitizers/sanitizer_options.sh"
else
  generator=()
  if command -v ninja > /dev/null; then generator=(-G Ninja); fi
  cmake "${generator[@]}" -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release -DWITH_TORCH=OFF -DKVSTREAM_BUILD_TESTS=OFF "$@" \
    > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
  cmake --build "$build" --target kvstream -j "$(nproc)"
fi
kvstream=$build/kvstream

fail() { echo "without_torch: FAILED: $*" >&2; exit 1; }
if ldd "$kvstream" | grep -qi torch; then fail "kvstream links LibTorch"; fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# simulate: every policy on the synthetic profile.
"$kvstream" simulate --profile synthetic --trace constant:gbps=2 --hardware a40_mistral-7b --policy quant8 cachegen mpc fixed:cachegen:2 \
  --slo 1 --json > simulate.json
python3 - <<'PY'
import json
runs = json.load(open('simulate.json'))['runs']
assert [r['policy'] for r in runs] == ['quant8', 'cachegen', 'mpc', 'fixed:cachegen:2'], runs
assert all(r['summary']['completed'] == 1 for r in runs), runs
PY

# run: profile files (written by a synthetic run) swept over two traces; once whole, once in shards.
cat > synthetic.json <<'JSON'
{"name": "synthetic", "contexts": [{"name": "syn", "source": "synthetic", "chunks": 4}], "policies": []}
JSON
"$kvstream" run synthetic.json --out synthetic --no-figures > /dev/null 2> synthetic.log
profile=$work/synthetic/profiles/syn/syn.json
[[ -f $profile ]] || fail "the synthetic run wrote no profile ($(cat synthetic.log))"
cat > files.json <<JSON
{"name": "files", "contexts": [{"name": "f", "source": "files", "files": ["$profile"]}],
 "traces": [{"name": "gen", "inputs": ["constant:gbps=1", "markov:seed=3,good_gbps=4,bad_gbps=0.5,good_s=1,bad_s=1,duration_s=20"]}],
 "policies": ["quant8", "cachegen:text=0", "oracle-dp:text=0"], "slo_s": [0.5, 1], "repetitions": 2}
JSON
"$kvstream" run files.json --out whole --no-figures --jobs 2 > /dev/null 2> whole.log || fail "run: $(cat whole.log)"
"$kvstream" run files.json --out shard0 --shard 0/2 --no-figures > /dev/null 2>&1 || fail "run --shard 0/2"
"$kvstream" run files.json --out shard1 --shard 1/2 --no-figures > /dev/null 2>&1 || fail "run --shard 1/2"
"$kvstream" merge shard0 shard1 --out merged --no-figures > /dev/null 2> merge.log || fail "merge: $(cat merge.log)"
for file in runs.jsonl summary.csv levels.csv config.json; do
  cmp -s "whole/$file" "merged/$file" || fail "merged $file differs from the single run's"
done
[[ $(wc -l < whole/runs.jsonl) -eq 24 ]] || fail "expected 24 runs, got $(wc -l < whole/runs.jsonl)"

# What needs a model says so.
for command in quality kv-export profile-prefill; do
  if "$kvstream" "$command" > out.txt 2>&1; then fail "kvstream $command ran without LibTorch"; fi
  grep -q "built without LibTorch" out.txt || fail "kvstream $command: $(cat out.txt)"
done
if "$kvstream" emulate --model stories260K --text text/tinystories/tinystories_val.txt --trace constant:gbps=1 \
     --policy text --slo 1 > out.txt 2>&1; then
  fail "emulate --model ran without LibTorch"
fi
grep -q "emulate --model runs a model: this kvstream was built without LibTorch" out.txt || fail "emulate --model: $(cat out.txt)"
cat > model.json <<'JSON'
{"name": "model", "contexts": [{"name": "m", "model": "stories260K", "dataset": "text/tinystories/tinystories_val.txt",
  "tokens": 64, "chunk_tokens": 32}], "traces": ["constant:gbps=1"], "policies": ["quant8"], "slo_s": 1}
JSON
if "$kvstream" run model.json --out model > out.txt 2>&1; then fail "run on a model context set ran without LibTorch"; fi
grep -q 'model.json: \$.contexts\[0\]: context set "m" measures model stories260K, but this kvstream was built without LibTorch' out.txt ||
  fail "run on a model context set: $(cat out.txt)"
[[ ! -e model/runs.jsonl ]] || fail "the refused run wrote results"
echo "without_torch: passed"
