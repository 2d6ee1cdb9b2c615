#!/usr/bin/env bash
# `kvstream emulate --model` end to end (docs/EMULATION.md "Real KV"): stories260K's KV streamed as
# real bitstreams and token ids, decoded, recomputed and prefilled by the client. Checks that
#  - a fixed level's requests carry exactly the profile's bytes, and that their measured quality
#    (after the KV that crossed the network) equals the profile's whole-context quality of that
#    level: the same bitstreams, decoded and assembled in order;
#  - text chunks are recomputed (recompute time, no bytes of KV) to the reference's predictions;
#  - an adaptive policy mixing levels and text under a Poisson workload completes every request;
#  - bad usage fails before any network is made.
# Needs root and TUN devices (CI has both); elsewhere it skips (exit 77), saying why.
# Usage: real_kv.sh KVSTREAM
set -euo pipefail
kvstream=$1

if "$kvstream" emulate --model stories260K --text t.txt --query-tokens 4 --trace constant:gbps=1 --policy text --slo 1 2> err.txt; then
  echo "real_kv: FAILED: --query-tokens with --model was accepted" >&2; exit 1
fi
grep -q -- "--query-tokens: with --model the query is the continuation's tokens" err.txt
if "$kvstream" emulate --profile synthetic --text t.txt --trace constant:gbps=1 --policy text --slo 1 2> err.txt; then
  echo "real_kv: FAILED: --text without --model was accepted" >&2; exit 1
fi
grep -q -- "--text goes with --model" err.txt
rm -f err.txt

if [ "$(id -u)" != 0 ]; then echo "real_kv: SKIPPED: emulation needs root"; exit 77; fi
if [ ! -c /dev/net/tun ]; then echo "real_kv: SKIPPED: no /dev/net/tun"; exit 77; fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# 4 chunks of 64 tokens; 2 Mbit/s makes cachegen and mpc send some chunks as text.
"$kvstream" emulate --model stories260K --text text/tinystories/tinystories_val.txt --tokens 256 --chunk-tokens 64 \
  --trace constant:gbps=0.002 --slo 0.6 --rtt-ms 20 --requests 3 --rate 4 \
  --policy fixed:cachegen:1 fixed:cachegen:3 text cachegen --json > "$out/emulate.json"

python3 - "$out/emulate.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["context"]["kv"] == "real", d["context"]["kv"]
profile = d["context"]["profile"]
levels = [l["name"] for l in profile["levels"]]
runs = {r["policy"]: r["requests"] for r in d["runs"]}
for policy in ("fixed:cachegen:1", "fixed:cachegen:3"):
    level = levels.index(policy[len("fixed:"):])
    want_bytes = sum(c["levels"][level]["bytes"] for c in profile["chunks"])
    want_quality = profile["chunks"][0]["levels"][level]["quality"]
    for r in runs[policy]:
        assert r["completed"], r
        assert r["bytes"] == want_bytes, (policy, r["bytes"], want_bytes)
        assert abs(r["quality"] - want_quality) < 1e-12, (policy, r["quality"], want_quality)
        assert r["breakdown"]["decode_s"] > 0 and r["breakdown"]["recompute_s"] == 0, r
for r in runs["text"]:
    assert r["completed"] and r["choices"] == ["text"] * len(profile["chunks"]), r
    assert r["breakdown"]["recompute_s"] > 0 and r["breakdown"]["decode_s"] == 0, r
    assert r["quality"] >= 0.95, r["quality"]  # recomputed KV: the reference's predictions (up to fp16 rounding)
mixed = [r for r in runs["cachegen"] if "text" in r["choices"] and set(r["choices"]) != {"text"}]
assert all(r["completed"] and 0 <= r["quality"] <= 1 for r in runs["cachegen"])
assert mixed, "cachegen mixed no levels with text at 2 Mbit/s: " + str([r["choices"] for r in runs["cachegen"]])
print("real_kv: OK: fixed levels carry the profile's bytes and quality; text recomputes; cachegen mixed",
      [r["choices"] for r in mixed][0])
PY
