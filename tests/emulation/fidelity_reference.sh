#!/usr/bin/env bash
# The fidelity regression test (docs/EMULATION.md "The stored reference"): the simulator rescored
# against the emulation of experiments/configs/fidelity.json stored in experiments/reference/fidelity
# (no root, no network, under a second). Fails when the tcp model's median |TTFT error| over the
# matrix exceeds 7.5 % (7.0 % when it was stored), or when the config changed since the reference was
# emulated (emulate it again).
# Usage: fidelity_reference.sh KVSTREAM SOURCE_DIR
set -euo pipefail
kvstream=$1
source_dir=$2

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$kvstream" fidelity "$source_dir/experiments/configs/fidelity.json" --rescore "$source_dir/experiments/reference/fidelity" \
  --out "$out/rescored" --no-figures --check tcp=0.075 | grep -E "^tcp +all|groups|rescored"
