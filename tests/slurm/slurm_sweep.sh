#!/usr/bin/env bash
# `kvstream slurm` against a real single-node Slurm (scripts/slurm-local.sh): a small sweep, with a
# context set measured on stories260K when kvstream has LibTorch (the profiling array), submitted,
# waited for, and compared with `kvstream run` on one machine: runs.jsonl, summary.csv, levels.csv
# and config.json must be identical. Then one shard and the merged results are removed, as after a
# failure: submitting again runs only that shard and the merge. Exit 77 (skipped) where Slurm cannot
# start here, saying why.
#   bash tests/slurm/slurm_sweep.sh KVSTREAM_BINARY torch|notorch
set -euo pipefail
kvstream=$1
torch=$2
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
cluster=$work/cluster
cleanup() {
  bash "$repo/scripts/slurm-local.sh" stop "$cluster" || true
  rm -rf "$work"
}
trap cleanup EXIT

status=0
start_output=$(bash "$repo/scripts/slurm-local.sh" start "$cluster" 2>&1) || status=$?
if [[ $status -eq 77 ]]; then echo "skipped: $start_output"; exit 77; fi
[[ $status -eq 0 ]] || { echo "$start_output" >&2; exit 1; }
eval "$(tail -n 1 <<<"$start_output")"  # export SLURM_CONF=...

cd "$work"
model_set=""
if [[ $torch == torch ]]; then
  model_set=', {"name": "ts", "model": "stories260K", "dataset": "text/tinystories/tinystories_val.txt", "count": 2,
                "tokens": 128, "chunk_tokens": 64, "continuation_tokens": 16, "stride_chars": 3000}'
fi
cat > sweep.json <<JSON
{
  "name": "slurm-test",
  "contexts": [{"name": "syn", "source": "synthetic", "chunks": 4, "chunk_tokens": 1500}$model_set],
  "codecs": ["cachegen", "quant:bits=8"],
  "traces": [{"name": "c1", "inputs": ["constant:gbps=1"]},
             {"name": "markov", "inputs": ["markov:seed=3,good_gbps=8,bad_gbps=0.5,good_s=0.3,bad_s=0.2,duration_s=20"]}],
  "policies": ["quant8", "cachegen", "mpc", "text"],
  "slo_s": [0.5, 1.5],
  "hardware": "a40_mistral-7b",
  "repetitions": 2
}
JSON


# Waits until the jobs of the submission recorded in $1/slurm/jobs.json have left the queue.
wait_for_jobs() {
  local ids
  ids=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(",".join(j[k]["job"] for k in ("profile","grid","merge") if k in j))' \
        "$1/slurm/jobs.json")
  for _ in $(seq 600); do
    [[ -z $(squeue -h -j "$ids" 2>/dev/null) ]] && return 0
    sleep 0.5
  done
  echo "the jobs $ids did not finish in 300 s" >&2
  squeue >&2
  return 1
}

# The one-machine run reads the profiles the profiling array measured (measured codec times differ
# from one measurement to the next; the cache is what makes two runs comparable).
run_single() {
  "$kvstream" run sweep.json --out single --profile-cache cache --no-figures > single.log 2>&1 ||
    { cat single.log >&2; return 1; }
}

same_as_single() {
  for file in runs.jsonl summary.csv levels.csv config.json; do
    cmp -s "single/$file" "sweep/$file" || { echo "sweep/$file differs from the one-machine run's" >&2; return 1; }
  done
}

"$kvstream" slurm sweep.json --out sweep --tasks 3 --profile-cache cache --no-figures > submit.log
cat submit.log
grep -q "grid: job" submit.log
if [[ $torch == torch ]]; then grep -q "profile: job" submit.log; fi
[[ -f sweep/slurm/grid.sbatch && -f sweep/slurm/merge.sbatch ]]
wait_for_jobs sweep
"$kvstream" slurm --status sweep | tee status.log
grep -q "3 of 3 shards complete" status.log
grep -q "done:" status.log
run_single
same_as_single
echo "first submission: identical to the one-machine run"

# As after a failed task: shard 1 and the merged results gone. Only they run again.
rm -rf sweep/shards/1-of-3 sweep/runs.jsonl
"$kvstream" slurm sweep.json --out sweep --tasks 3 --profile-cache cache --no-figures > resubmit.log
cat resubmit.log
grep -q "shards 1 of 3" resubmit.log
if grep -q "profile: job" resubmit.log && [[ $torch != torch ]]; then echo "a profiling job without model sets" >&2; exit 1; fi
wait_for_jobs sweep
same_as_single
"$kvstream" slurm sweep.json --out sweep --tasks 3 --profile-cache cache --no-figures | grep -q "nothing to submit"
echo "resubmission: only shard 1 and the merge ran; identical again"

# A task that fails (shard 2's result directory cannot be made: a file is in its place): the merge
# waits for ever on afterok, and --status names the shard and its log.
mkdir -p broken/shards && touch broken/shards/2-of-3
"$kvstream" slurm sweep.json --out broken --tasks 3 --profile-cache cache --no-figures > broken.log
grid=$(python3 -c 'import json; print(json.load(open("broken/slurm/jobs.json"))["grid"]["job"])')
for _ in $(seq 600); do
  [[ -z $(squeue -h -j "$grid" 2>/dev/null) ]] && break
  sleep 0.5
done
for _ in $(seq 60); do
  "$kvstream" slurm --status broken > broken-status.log
  grep -q "DependencyNeverSatisfied" broken-status.log && break
  sleep 1
done
cat broken-status.log
grep -q "shard 2: log $work/broken/slurm/logs/grid-${grid}_2.out" broken-status.log
grep -q "2 of 3 shards complete" broken-status.log
grep -q "DependencyNeverSatisfied" broken-status.log
[[ -s $work/broken/slurm/logs/grid-${grid}_2.out ]]
echo "a failed task: named with its log by --status"

# A result directory whose path holds a space, quotes, '#' and '%', and an extra option with a space:
# the #SBATCH lines quote them as the real sbatch reads them, so the logs and results land there.
odd="$work/it's a \"dir\" #1 100%"
"$kvstream" slurm sweep.json --out "$odd" --tasks 1 --profile-cache cache --no-figures \
  --sbatch-arg "--comment=two words" > odd.log
wait_for_jobs "$odd"
[[ -s $odd/runs.jsonl ]] || { echo "no results in $odd" >&2; ls -R "$work" >&2; exit 1; }
merge_job=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["merge"]["job"])' "$odd/slurm/jobs.json")
[[ -f $odd/slurm/logs/merge-$merge_job.out ]] || { echo "the merge log is not in $odd/slurm/logs" >&2; exit 1; }
echo "a path with a space, quotes, '#' and '%': quoted as sbatch reads it"
