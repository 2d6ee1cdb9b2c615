#!/usr/bin/env bash
# A real single-node Slurm cluster on this machine, for tests and for trying `kvstream slurm`: munged
# on a private socket, slurmctld and slurmd for localhost on private ports (16817, 16818), no cgroup or
# accounting plugins, every file in one directory. Needs root and Debian's slurm-wlm and munge
# (scripts/setup.sh installs them).
#
#   bash scripts/slurm-local.sh start DIR   starts it with its files in DIR (new or empty), waits until
#                                           the node is idle, prints `export SLURM_CONF=DIR/slurm.conf`
#   bash scripts/slurm-local.sh stop DIR    cancels every job, stops the daemons it started (by their
#                                           pid files in DIR) and removes DIR
#
# Exit status 77 from start: this machine cannot run it (not root, packages missing), saying why; the
# test that calls it (tests/slurm/slurm_sweep.sh) then skips.
set -euo pipefail

usage() { echo "usage: bash scripts/slurm-local.sh start|stop DIR" >&2; exit 2; }
[[ $# -eq 2 ]] || usage
action=$1
dir=$2

stop() {
  [[ -d $dir ]] || return 0
  if [[ -f $dir/slurm.conf ]]; then
    SLURM_CONF=$dir/slurm.conf scancel --user="$(id -un)" >/dev/null 2>&1 || true
  fi
  for daemon in slurmd slurmctld; do
    if [[ -f $dir/$daemon.pid ]]; then
      pid=$(cat "$dir/$daemon.pid")
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
    fi
  done
  # Job steps slurmd left behind (slurmstepd of a killed job).
  pkill -f "slurmstepd.*$dir" 2>/dev/null || true
  if [[ -S $dir/munge.sock ]]; then munged --socket="$dir/munge.sock" --stop >/dev/null 2>&1 || true; fi
  rm -rf "$dir"
}

case $action in
  stop) stop; exit 0 ;;
  start) ;;
  *) usage ;;
esac

[[ $(id -u) -eq 0 ]] || { echo "slurm-local: needs root (slurmd runs jobs as their users)" >&2; exit 77; }
for tool in munged slurmctld slurmd sbatch squeue scancel sinfo; do
  command -v "$tool" >/dev/null || { echo "slurm-local: $tool is missing (scripts/setup.sh installs slurm-wlm and munge)" >&2; exit 77; }
done
[[ -f /etc/munge/munge.key ]] || { echo "slurm-local: /etc/munge/munge.key is missing (the munge package makes it)" >&2; exit 77; }
if [[ -e $dir && -n $(ls -A "$dir" 2>/dev/null) ]]; then echo "slurm-local: $dir is not empty" >&2; exit 1; fi
mkdir -p "$dir/state" "$dir/spool"
dir=$(cd "$dir" && pwd)
failed() {
  echo "slurm-local: start failed; the end of its logs:" >&2
  tail -n 5 "$dir"/*.log >&2 2>/dev/null || true
  stop
}
trap failed ERR

host=$(hostname -s)
memory_mb=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2 ))
cat > "$dir/slurm.conf" <<EOF
ClusterName=kvstream-local
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
SlurmctldPort=16817
SlurmdPort=16818
AuthType=auth/munge
AuthInfo=socket=$dir/munge.sock
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
NodeName=$host CPUs=$(nproc) RealMemory=$memory_mb State=UNKNOWN
PartitionName=local Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
install -m 400 /etc/munge/munge.key "$dir/munge.key"
munged --force --socket="$dir/munge.sock" --key-file="$dir/munge.key" --log-file="$dir/munged.log" \
  --pid-file="$dir/munged.pid" --seed-file="$dir/munged.seed"
export SLURM_CONF=$dir/slurm.conf
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 100); do
  [[ $(sinfo -h -o %T 2>/dev/null) == idle ]] && break
  sleep 0.2
done
[[ $(sinfo -h -o %T 2>/dev/null) == idle ]] || { echo "slurm-local: the node did not come up" >&2; false; }
trap - ERR
echo "export SLURM_CONF=$SLURM_CONF"
