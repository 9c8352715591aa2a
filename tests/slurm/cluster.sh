#!/usr/bin/env bash
# A real single-node Slurm cluster for the sharded-eval tests.
#
#   bash tests/slurm/cluster.sh up     install slurm-wlm and munge (Debian) if
#                                       missing, start munged, slurmctld, slurmd
#   bash tests/slurm/cluster.sh down   stop the three daemons by pid
#   bash tests/slurm/cluster.sh check  exit 0 when the cluster answers
#
# Needs root (it writes /etc/slurm/slurm.conf and /etc/munge/munge.key, as a
# cluster's nodes have them). State, spool, logs and pid files live under
# $GISCLAW_SLURM_DIR (default /tmp/gisclaw-slurm); `down` removes nothing
# else and leaves no process running.
set -euo pipefail

dir=${GISCLAW_SLURM_DIR:-/tmp/gisclaw-slurm}
conf=/etc/slurm/slurm.conf

say() { echo "slurm cluster: $*" >&2; }

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# shellcheck source=../../sandbox/debian.sh
. "$(dirname "$0")/../../sandbox/debian.sh"

install() {
    install_debian_packages slurm-wlm munge
}

check() {
    # `scontrol ping` answers for slurmctld; the node must also be usable.
    scontrol ping 2>/dev/null | grep -q "is UP" || return 1
    sinfo -h -o '%t' 2>/dev/null | grep -Eq '^(idle|mix|alloc)'
}

up() {
    install
    if check; then
        say "already up"
        return
    fi
    local host cpus mem
    host=$(hostname)
    cpus=$(nproc)
    # Leave a quarter of the memory to the system.
    mem=$(awk '/MemTotal/ { printf "%d", $2 / 1024 * 3 / 4 }' /proc/meminfo)
    mkdir -p "$dir"/{state,spool,log,run}
    # munge: a fresh key, the daemon as the munge user.
    as_root mkdir -p /etc/munge /run/munge /var/lib/munge /var/log/munge
    if [ ! -s /etc/munge/munge.key ]; then
        as_root dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
    fi
    as_root chown -R munge:munge /etc/munge /run/munge /var/lib/munge /var/log/munge
    as_root chmod 0400 /etc/munge/munge.key
    as_root chmod 0755 /run/munge
    if ! [ -S /run/munge/munge.socket.2 ] || ! munge -n >/dev/null 2>&1; then
        as_root rm -f /run/munge/munged.pid
        as_root su -s /bin/sh munge -c "munged --pid-file=/run/munge/munged.pid"
    fi
    as_root tee "$conf" >/dev/null <<EOF
# Written by gisclaw's tests/slurm/cluster.sh: a one-node test cluster.
ClusterName=gisclaw-test
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
ReturnToService=2
MpiDefault=none
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldPort=6817
SlurmdPort=6818
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
MaxArraySize=1001
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
    as_root slurmctld
    as_root slurmd
    for _ in $(seq 1 60); do
        if check; then
            say "up: node $host, $cpus CPUs, $mem MB (state in $dir)"
            return
        fi
        sleep 1
    done
    say "did not come up within 60 s; logs in $dir/log"
    tail -n 20 "$dir"/log/*.log >&2 || true
    exit 1
}

stop_pid() {
    local file=$1 name=$2
    [ -s "$file" ] || return 0
    local pid
    pid=$(cat "$file")
    if kill -0 "$pid" 2>/dev/null; then
        as_root kill "$pid"
        for _ in $(seq 1 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.2
        done
        if kill -0 "$pid" 2>/dev/null; then
            as_root kill -9 "$pid" || true
        fi
        say "stopped $name (pid $pid)"
    fi
    as_root rm -f "$file"
}

down() {
    stop_pid "$dir/run/slurmd.pid" slurmd
    stop_pid "$dir/run/slurmctld.pid" slurmctld
    stop_pid /run/munge/munged.pid munged
}

case "${1:-}" in
    up) up ;;
    down) down ;;
    check) check ;;
    install) install ;;
    *)
        echo "usage: $0 up|down|check|install" >&2
        exit 2
        ;;
esac
