#!/usr/bin/env bash
# A one-node Slurm cluster on localhost for tests (munged + slurmctld + slurmd, all in one folder).
#   scripts/slurm-cluster.sh start DIR   writes DIR/slurm.conf, starts the three daemons, waits
#                                        until the node is idle; prints SLURM_CONF=DIR/slurm.conf
#   scripts/slurm-cluster.sh stop DIR    stops them (by the pids in DIR), leaving nothing running
# Needs root (SlurmUser=root) and Debian's slurm-wlm and munge (`make deps`). Ports are derived
# from DIR's name so that two clusters on one machine do not collide.
set -Eeuo pipefail
cmd=${1:?usage: slurm-cluster.sh start|stop DIR}
dir=${2:?usage: slurm-cluster.sh start|stop DIR}

stop() {
  local name pid
  for name in slurmd slurmctld munged; do
    [ -f "$dir/$name.bgpid" ] || continue
    pid=$(cat "$dir/$name.bgpid")
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    rm -f "$dir/$name.bgpid"
  done
}

if [ "$cmd" = stop ]; then
  stop
  exit 0
fi
[ "$cmd" = start ] || { echo "usage: slurm-cluster.sh start|stop DIR" >&2; exit 2; }
for tool in munged slurmctld slurmd srun sbatch squeue scancel scontrol; do
  command -v "$tool" >/dev/null || PATH="$PATH:/usr/sbin:/sbin" command -v "$tool" >/dev/null || {
    echo "slurm-cluster.sh: $tool is not installed; run \`make deps\` (Debian: slurm-wlm munge)" >&2; exit 3; }
done
export PATH="$PATH:/usr/sbin:/sbin"
[ "$(id -u)" = 0 ] || { echo "slurm-cluster.sh: must run as root (SlurmUser=root)" >&2; exit 3; }

mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
chmod 0700 "$dir" "$dir/munge"
host=$(hostname -s)
base=$(( 20000 + $(printf '%s' "$dir" | cksum | cut -d' ' -f1) % 20000 ))

# munge: a private key and socket; nothing of the host's munge is used.
dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
chmod 0400 "$dir/munge/munge.key"
munged --foreground --force --socket="$dir/munge/munge.sock" --key-file="$dir/munge/munge.key" \
  --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/munged.seed" \
  >"$dir/munged.out" 2>&1 &
echo $! >"$dir/munged.bgpid"
for _ in $(seq 1 50); do [ -S "$dir/munge/munge.sock" ] && break; sleep 0.1; done
[ -S "$dir/munge/munge.sock" ] || { cat "$dir/munged.out" "$dir/munge/munged.log" >&2 2>/dev/null || true; stop; exit 1; }

# The node as slurmd sees it (CPUs, sockets, cores, memory), so that it registers as configured.
node=$(slurmd -C | head -1 | sed "s/^NodeName=[^ ]*/NodeName=$host NodeAddr=127.0.0.1/")
cat >"$dir/slurm.conf" <<CONF
ClusterName=ckotest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$base
SlurmdPort=$((base + 1))
SrunPortRange=$((base + 2))-$((base + 40))
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
ReturnToService=2
KillWait=2
MinJobAge=300
SlurmdTimeout=30
InactiveLimit=0
$node
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$dir/slurm.conf"
slurmctld -D -c -i -f "$SLURM_CONF" >"$dir/slurmctld.out" 2>&1 &
echo $! >"$dir/slurmctld.bgpid"
slurmd -D -f "$SLURM_CONF" >"$dir/slurmd.out" 2>&1 &
echo $! >"$dir/slurmd.bgpid"
for _ in $(seq 1 300); do
  state=$(sinfo -h -n "$host" -o %T 2>/dev/null || true)
  [ "$state" = idle ] && { echo "SLURM_CONF=$SLURM_CONF"; exit 0; }
  sleep 0.2
done
echo "slurm-cluster.sh: the node did not become idle (state '${state:-none}'); logs in $dir" >&2
tail -n 20 "$dir/slurmctld.log" "$dir/slurmd.log" "$dir/slurmctld.out" "$dir/slurmd.out" >&2 2>/dev/null || true
stop
exit 1
