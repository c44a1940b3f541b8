#!/usr/bin/env bash
# A one-machine Slurm cluster for launch tests (docs/multinode.md): starts munged, slurmctld and
# slurmd from a private directory (nothing under /etc or /var is touched), runs
# tests/c/launch/launcher_world.c under `srun --mpi=pmi2` and `srun --mpi=pmix` with 2 and 4 ranks,
# with and without logical nodes (WEFT_NODES: the UCX addresses then travel through Slurm's
# key-value space), and stops the daemons. Prints `slurm: N passed, N failed`; exits 0 with a
# clear SKIP line when Slurm or munge is not installed (Debian: slurmd slurmctld slurm-client
# munge) or the daemons cannot start here.
#
#     scripts/slurm-local.sh [PREFIX]        # PREFIX: Weft's install tree (default: build)
set -uo pipefail
cd "$(dirname "$0")/.."
PREFIX="$(cd "${1:-build}" && pwd)"

for tool in srun slurmd slurmctld munged scontrol; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "slurm: SKIP: $tool is not installed (Debian: apt-get install slurmd slurmctld slurm-client munge)"
        exit 0
    fi
done

DIR="$(mktemp -d /tmp/weft-slurm.XXXXXX)"
HOST="$(hostname -s)"
NODE_LINE="$(slurmd -C | head -n1)"
PORT=$((20000 + RANDOM % 20000))
pids=()
cleanup() {
    # Jobs end first (their slurmstepd would outlive a stopped slurmd), then the daemons.
    for _ in $(seq 1 40); do
        [ -z "$(squeue -h 2>/dev/null)" ] && [ -z "$(stepds)" ] && break
        sleep 0.25
    done
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$DIR"
}
# The step daemons of this cluster (their command line names its spool directory).
stepds() {
    local p
    for p in /proc/[0-9]*; do
        tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -q "^slurmstepd" || continue
        grep -qs "$DIR" "$p/environ" "$p/cmdline" && echo "${p#/proc/}"
    done
}
trap cleanup EXIT

mkdir -p "$DIR/state" "$DIR/spool" "$DIR/munge"
chmod 700 "$DIR/munge"
dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$DIR/munge/munge.key"
munged --force --foreground --socket="$DIR/munge/sock" --key-file="$DIR/munge/munge.key" \
    --pid-file="$DIR/munge/pid" --log-file="$DIR/munge/log" --seed-file="$DIR/munge/seed" \
    >"$DIR/munge/out" 2>&1 &
pids+=($!)

cat > "$DIR/slurm.conf" <<EOF
ClusterName=weft
SlurmctldHost=$HOST
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SrunPortRange=$((PORT + 2))-$((PORT + 200))
AuthType=auth/munge
AuthInfo=socket=$DIR/munge/sock
CredType=cred/munge
SlurmUser=$(id -un)
SlurmdUser=$(id -un)
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
$NODE_LINE State=UNKNOWN
PartitionName=weft Nodes=$HOST Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
EOF
# Slurm's PMIx plugin keeps its per-step directories here, not in /tmp (where a stale one of
# an earlier cluster's job with the same number would stop the step from starting).
mkdir -p "$DIR/pmix"
echo "PMIxCliTmpDirBase=$DIR/pmix" > "$DIR/mpi.conf"
export SLURM_CONF="$DIR/slurm.conf"

slurmctld -D -i -f "$SLURM_CONF" >"$DIR/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" >"$DIR/slurmd.out" 2>&1 &
pids+=($!)

ready=0
for _ in $(seq 1 60); do
    if scontrol show node "$HOST" 2>/dev/null | grep -qE "State=(IDLE|MIXED)"; then ready=1; break; fi
    sleep 0.5
done
if [ "$ready" != 1 ]; then
    echo "slurm: SKIP: the local slurmctld/slurmd did not come up here"
    tail -n 5 "$DIR/slurmctld.log" "$DIR/slurmd.log" "$DIR/slurmctld.out" "$DIR/slurmd.out" 2>/dev/null
    exit 0
fi

exe="$DIR/launcher_world"
"$PREFIX/bin/mpicc" -O1 -g -Wall -Werror -I tests/c/include -o "$exe" tests/c/launch/launcher_world.c || exit 1

passed=0 failed=0
# srun_case NAME MPI RANKS [VAR=VALUE ...]: the program checks its world against the
# launcher's; rank 0 prints " No Errors" when every check held.
srun_case() {
    local name="$1" mpi="$2" n="$3"
    shift 3
    local out
    out="$(env "$@" UCX_TLS=self,tcp,posix,sysv timeout 120 srun --mpi="$mpi" -n "$n" --overcommit \
        "$exe" "$n" "slurm-$mpi" 2>&1)"
    if [ $? -eq 0 ] && grep -qx " No Errors" <<<"$out"; then
        echo "PASS slurm/$name"
        passed=$((passed + 1))
    else
        echo "FAIL slurm/$name"
        tail -n 20 <<<"$out" | sed 's/^/    /'
        grep -iE "error|fail" "$DIR/slurmd.log" | tail -n 8 | sed 's/^/    slurmd: /'
        failed=$((failed + 1))
    fi
}
for mpi in pmi2 pmix; do
    srun_case "${mpi}_2" "$mpi" 2
    srun_case "${mpi}_4" "$mpi" 4
    srun_case "${mpi}_2x2" "$mpi" 4 WEFT_NODES=2
    srun_case "${mpi}_per_rank" "$mpi" 4 WEFT_NODES=per-rank
done
echo "slurm: $passed passed, $failed failed"
[ "$failed" = 0 ]
