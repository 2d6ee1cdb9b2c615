#!/usr/bin/env bash
# Nothing outlives an emulation (docs/EMULATION.md "Clean-up"): `kvstream emulate` is stopped by
# SIGINT (Ctrl-C), SIGTERM and SIGKILL in the middle of a run, and afterwards no process of it is
# left and none of the network namespaces it made (with their TUN devices) is held by any process.
# Two emulations side by side do not collide. A run that fails on bad input says why. Needs root (CI has it); elsewhere it skips
# (exit 77), saying why.
# Usage: cleanup.sh KVSTREAM
set -euo pipefail
kvstream=$1

if [ "$(id -u)" != 0 ]; then echo "cleanup: SKIPPED: emulation needs root"; exit 77; fi
if [ ! -c /dev/net/tun ]; then echo "cleanup: SKIPPED: no /dev/net/tun"; exit 77; fi

fail() { echo "cleanup: FAILED: $*" >&2; exit 1; }
own_ns=$(readlink /proc/self/ns/net)

# The network namespaces process $1 holds, as descriptors or entered by its threads, other than ours.
namespaces_of() {
  { readlink /proc/"$1"/fd/* /proc/"$1"/task/*/ns/net 2>/dev/null || true; } | { grep '^net:' || true; } |
    { grep -vxF "$own_ns" || true; } | sort -u
}
# Whether any process still holds namespace $1.
held() {
  { readlink /proc/[0-9]*/fd/* /proc/[0-9]*/task/*/ns/net 2>/dev/null || true; } | grep -qxF "$1"
}

profile=$(cd "$(dirname "$0")/../.." && pwd)/experiments/configs/profiles/smollm2-wikitext/wiki.test-0.json
for signal in INT TERM KILL; do
  # 40 requests of 7 MB at 2/s over a 100 Mbit/s link: about 20 s, stopped after its namespaces
  # exist. A shell starts background commands with SIGINT ignored; python restores Ctrl-C's default.
  python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])' \
    "$kvstream" emulate --profile "$profile" --trace constant:gbps=0.1 --policy fixed:cachegen:2 --slo 5 \
    --requests 40 --rate 2 --rtt-ms 20 > /dev/null 2>&1 &
  pid=$!
  namespaces=""
  for _ in $(seq 50); do
    namespaces=$(namespaces_of "$pid")
    [ "$(echo "$namespaces" | grep -c .)" -ge 2 ] && break
    sleep 0.1
  done
  [ "$(echo "$namespaces" | grep -c .)" -ge 2 ] || fail "SIG$signal: the emulator made no namespaces within 5 s"
  sleep 1  # mid-transfer
  kill -s "$signal" "$pid"
  for _ in $(seq 100); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2> /dev/null; then kill -9 "$pid"; fail "SIG$signal: the emulator still runs 10 s later"; fi
  status=0
  wait "$pid" || status=$?
  [ "$status" -ne 0 ] || fail "SIG$signal: the stopped emulation exited 0"
  if pgrep -P "$pid" > /dev/null; then fail "SIG$signal: a child of the emulator is still running"; fi
  for ns in $namespaces; do
    if held "$ns"; then fail "SIG$signal: namespace $ns is still held"; fi
  done
  echo "cleanup: SIG$signal: exit $status, namespaces $(echo $namespaces) gone"
done

# Two emulations side by side: each has its own namespaces and devices, and both finish.
pids=()
for _ in 1 2; do
  "$kvstream" emulate --profile "$profile" --trace constant:gbps=0.1 --policy fixed:cachegen:2 --slo 5 --json \
    > /dev/null 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || fail "two emulations side by side: one failed"; done
echo "cleanup: two emulations side by side: both completed"

# An error (a congestion control the kernel lacks) after the network exists: a clear message, exit 1.
err=$(mktemp)
trap 'rm -f "$err"' EXIT
if "$kvstream" emulate --profile "$profile" --trace constant:gbps=0.1 --policy fixed:cachegen:2 --slo 5 \
     --cc no-such-cc > /dev/null 2> "$err"; then
  fail "an unknown congestion control was accepted"
fi
grep -q "no-such-cc" "$err" || fail "the error does not name the congestion control: $(cat "$err")"
echo "cleanup: OK"
