#!/usr/bin/env bash
# `gruwb sweep --slurm` on a real one-node Slurm cluster on this machine (Debian's slurmctld,
# slurmd and munge with a generated key, all in a temporary folder, on their own ports): a sweep
# of 2 cells x 2 units x 2 seeds (2 epochs, BasicMotions cut to 20 steps) runs as one array job,
# is collected, and must equal the same sweep run here with --jobs 2 (timings aside). A second
# submission whose nodes cannot start gruwb must be reported as failed with its log. The daemons
# are stopped at the end, whatever happened. Needs root (slurmd starts jobs as their user).
#   bash tests/app/sweep_slurm_test.sh BUILD_DIR
set -euo pipefail
build=$(cd "${1:?usage: sweep_slurm_test.sh BUILD_DIR}" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)
gruwb="$build/app/cli/gruwb"
for tool in slurmctld slurmd munged mungekey sbatch squeue sinfo jq; do
  command -v "$tool" >/dev/null || { echo "sweep_slurm_test: $tool is missing (.ci/install-deps.sh installs it)" >&2; exit 1; }
done
[ -x "$gruwb" ] || { echo "sweep_slurm_test: $gruwb is not built" >&2; exit 1; }

# Not under /tmp: munged refuses a socket folder whose parents anyone may write.
work=$(mktemp -d "$root/build-slurm-test.XXXXXX")
chmod 755 "$work"
pids=()
stop() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  done
    [ "${GRUWB_KEEP_SLURM_TEST:-0}" = 1 ] && echo "kept $work" || rm -rf "$work"
}
trap stop EXIT

# munge: a fresh key (a private folder), its own socket (a folder everyone may enter).
mkdir -m 700 "$work/munge-key"
mkdir -m 755 "$work/munge"
mungekey --create --keyfile="$work/munge-key/munge.key"
munged --key-file="$work/munge-key/munge.key" --socket="$work/munge/munge.socket" \
  --pid-file="$work/munge-key/munged.pid" --log-file="$work/munge-key/munged.log" \
  --seed-file="$work/munge-key/munged.seed" --foreground 2>/dev/null &
pids+=($!)
for _ in $(seq 50); do [ -S "$work/munge/munge.socket" ] && break; sleep 0.1; done
[ -S "$work/munge/munge.socket" ] || { echo "sweep_slurm_test: munged did not start" >&2; cat "$work/munge-key/munged.log" >&2; exit 1; }

# Slurm: this host as controller and only node, its real CPUs and memory (slurmd -C).
host=$(hostname -s)
node=$(slurmd -C | head -1)
mkdir -p "$work/state" "$work/spool"
export SLURM_CONF="$work/slurm.conf"
cat >"$SLURM_CONF" <<EOF
ClusterName=gruwbtest
SlurmctldHost=$host
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge/munge.socket
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -D -i -f "$SLURM_CONF" 2>/dev/null &
pids+=($!)
slurmd -D -f "$SLURM_CONF" 2>/dev/null &
pids+=($!)
state=""
for _ in $(seq 120); do
  state=$(timeout 5 sinfo -h -o %t 2>/dev/null || true)
  [ "$state" = idle ] && break
  sleep 0.5
done
if [ "$state" != idle ]; then
  echo "sweep_slurm_test: the node did not come up (state '$state')" >&2
  tail -n 5 "$work/slurmctld.log" "$work/slurmd.log" >&2 || true
  exit 1
fi

cat >"$work/sweep.json" <<EOF
{
  "format": "gruwb-sweep-1",
  "name": "cells on Slurm",
  "experiment": {"build": "cell=gru,units=8", "data": "$root/resources/samples/BasicMotions_TRAIN.ts",
                 "timesteps": 20, "stages": "all"},
  "fixed": {"epochs": 2},
  "grid": [{"cell": ["gru", "lstm"]}, {"units": [8, 16]}, {"seed": [1, 2]}]
}
EOF

start=$SECONDS
"$gruwb" sweep "$work/sweep.json" --dir "$work/local" --jobs 2 >"$work/local.out"
echo "sweep_slurm_test: local sweep, 8 runs, --jobs 2: $((SECONDS - start)) s"

start=$SECONDS
"$gruwb" sweep "$work/sweep.json" --dir "$work/shared" --slurm --cpus 1 --time 5 | tee "$work/submit.out"
grep -q '^submitted Slurm job [0-9]*: 8 tasks (runs 0-7)' "$work/submit.out"
"$gruwb" sweep --status "$work/shared" --wait --timeout 150
"$gruwb" sweep --collect "$work/shared" >"$work/collect.out"
echo "sweep_slurm_test: Slurm sweep, 8 array tasks, submitted to collected: $((SECONDS - start)) s"
grep -q '8 runs, 8 finished, 0 failed, 0 pending' "$work/collect.out"
grep -q 'gruwb sweep run 3: r3 cell=gru units=16 seed=2' "$work/shared/logs/run-0003.log"

# The same results: every figure but the timings (wall time, samples/s, host latency).
strip='walk(if type == "object" then del(.seconds, .samples_per_second, .latency_us, .started) else . end)'
diff <(jq -S "$strip" "$work/local/sweep-result.json") <(jq -S "$strip" "$work/shared/sweep-result.json")
[ "$(jq '.runs | length' "$work/shared/sweep-result.json")" = 8 ]
[ "$(jq '[.merged.runs[] | select(.epochs | length == 3)] | length' "$work/shared/sweep-result.json")" = 8 ]
echo "sweep_slurm_test: the Slurm sweep's merged result equals the local one"

# Nodes that cannot start gruwb: the tasks end without results; --status names them with their log.
"$gruwb" sweep "$work/sweep.json" --dir "$work/broken" --slurm --gruwb "$work/no-such-gruwb" >/dev/null
set +e
"$gruwb" sweep --status "$work/broken" --wait --timeout 60 >"$work/broken.out" 2>"$work/broken.err"
code=$?
set -e
[ "$code" = 1 ] || { echo "sweep_slurm_test: --status of failed tasks exited $code" >&2; cat "$work/broken.out" "$work/broken.err" >&2; exit 1; }
grep -q '8 failed' "$work/broken.out"
grep -q "run 0 (r0 cell=gru units=8 seed=1) failed: its Slurm task ended without a result (log $work/broken/logs/run-0000.log: .*no-such-gruwb" "$work/broken.out" ||
  { cat "$work/broken.out" >&2; exit 1; }
[ "$(wc -l <"$work/broken.err")" = 1 ]
echo "sweep_slurm_test: ok"
