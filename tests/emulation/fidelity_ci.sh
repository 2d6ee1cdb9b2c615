#!/usr/bin/env bash
# The short fidelity check (docs/EMULATION.md "`kvstream fidelity`"): the simulator's tcp link
# model against the emulator on tests/emulation/fidelity_ci.json (12 requests); fails when the
# median |TTFT error| exceeds 5 %; then checks that --rescore of the result reproduces its tables.
# Needs root and TUN devices (CI has both); elsewhere it skips (exit 77), saying why.
# Usage: fidelity_ci.sh KVSTREAM CONFIG
set -euo pipefail
kvstream=$1
config=$2

if [ "$(id -u)" != 0 ]; then echo "fidelity_ci: SKIPPED: emulation needs root"; exit 77; fi
if [ ! -c /dev/net/tun ]; then echo "fidelity_ci: SKIPPED: no /dev/net/tun"; exit 77; fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$kvstream" fidelity "$config" --out "$out" --overwrite --no-figures --link-check-s 1 --check tcp=0.05
# Rescored against the stored emulations, the same simulator gives the same table, to the byte.
"$kvstream" fidelity "$config" --rescore "$out" --out "$out/rescored" --no-figures > /dev/null
for table in fidelity.csv fidelity_groups.csv; do
  cmp "$out/$table" "$out/rescored/$table" || { echo "fidelity_ci: FAILED: --rescore changed $table" >&2; exit 1; }
done
