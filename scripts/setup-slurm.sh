#!/usr/bin/env bash
# Makes a real one-node Slurm with job accounting answer on this machine, idempotently, without
# systemd (docs/placement.md "The local Slurm"; the recipe: ../../shared/docs/slurm-offline.md):
#   - installs Debian's slurm-wlm, slurmdbd, munge and mariadb-server where missing (apt-get);
#   - writes a one-node configuration once (this machine's CPUs and memory from `slurmd -C`,
#     proctrack/linuxproc, task/none, select/cons_tres with CPUs and memory consumable, one GPU
#     gres declared on /dev/null so that GPU requests are accepted, a default partition `main`
#     without a time limit and a partition `short` of 10 minutes);
#   - starts munged, MariaDB, slurmdbd, slurmctld and slurmd (each only when it does not run:
#     a running daemon is never restarted), creates the accounting database, registers the
#     cluster, and waits until `sinfo` shows the node up and `sacct` answers.
# Everything (configuration, keys, database, state, spool, logs, pid files) lives in one folder:
# EXPBENCH_SLURM_DIR, default .cache/slurm/ of this checkout, so it never touches /etc/slurm,
# /etc/munge or a system MariaDB. Its ports are its own (derived from the folder, or
# EXPBENCH_SLURM_PORT_BASE: slurmctld, slurmd, slurmdbd, MariaDB on base .. base+3, loopback).
# Clients need `SLURM_CONF=<folder>/etc/slurm.conf` (printed at the end; also in <folder>/env.sh).
#   bash scripts/setup-slurm.sh          set up and start (or check that it runs)
#   bash scripts/setup-slurm.sh --stop   stop the daemons this folder's pid files name
# Cached, never depended on: the downloaded packages (.cache/apt-slurm/, reused by apt-get when
# present), the configuration and the accounting database in the folder. The configuration is
# rewritten when it was made for another machine (host name, `slurmd -C`) or by another version of
# this recipe (RECIPE below), and stale pid files and sockets of daemons that are gone are ignored.
# Needs root (apt-get, munged, slurmd). Exit status: 0 when sinfo and sacct answer at the end; 3
# when Slurm cannot run on this machine at all (not root and no sudo, no apt-get, Debian's Slurm
# packages not installable): the reason is printed and written to <folder>/unavailable, where the
# Slurm tests read it and skip saying so (test/harness/slurm.ts); any other status is a failure.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${EXPBENCH_SLURM_DIR:-$ROOT/.cache/slurm}"
WAIT_S="${EXPBENCH_SLURM_WAIT_S:-90}"
START=$SECONDS
CONF="$DIR/etc/slurm.conf"
DBD_CONF="$DIR/etc/slurmdbd.conf"
MUNGE_SOCK="$DIR/munge/run/munge.socket"
DB_SOCK="$DIR/mysql/run/mysqld.sock"
PACKAGES=(slurm-wlm slurmdbd munge mariadb-server)
# Bump when the configuration written below changes, so that a cached folder's is rewritten.
RECIPE=2
APT_CACHE="${EXPBENCH_SLURM_APT_CACHE:-$ROOT/.cache/apt-slurm}"

say() { echo "[setup-slurm $(( SECONDS - START ))s] $*"; }
die() { echo "[setup-slurm] error: $*" >&2; exit 1; }
# Slurm cannot run on this machine: says why, records it for the tests, exits 3.
unavailable() {
  echo "[setup-slurm] Slurm cannot run here: $*" >&2
  mkdir -p "$DIR" && printf '%s\n' "$*" > "$DIR/unavailable"
  exit 3
}
export SLURM_CONF="$CONF"

# Each daemon's pid file (MariaDB's in a folder its user `mysql` can write).
pidfile_of() { if [[ $1 == mariadbd ]]; then echo "$DIR/mysql/run/mariadbd.pid"; else echo "$DIR/run/$1.pid"; fi; }

# The pid in a pid file when that process runs, is the program named and is this folder's (its
# command line names the folder, or its environment this SLURM_CONF): a reused pid, or a pid file
# copied with a cached folder, is not it.
running_pid() {
  local file=$1 prog=$2 pid
  [[ -s "$file" ]] || return 1
  pid="$(tr -dc 0-9 < "$file")"
  [[ -n "$pid" && -r "/proc/$pid/comm" ]] || return 1
  [[ "$(cat "/proc/$pid/comm")" == "$prog" ]] || return 1
  grep -qaF -- "$DIR/" "/proc/$pid/cmdline" 2>/dev/null || grep -qzxF -- "SLURM_CONF=$CONF" "/proc/$pid/environ" 2>/dev/null || return 1
  echo "$pid"
}

# Waits (at most WAIT_S seconds) until the command succeeds; the name says what is awaited. Fails
# at once when the daemon this script just started ($STARTED, its name in $STARTED_NAME) is gone.
STARTED=""; STARTED_NAME=""
wait_for() {
  local what=$1; shift
  for ((i = 0; i < WAIT_S * 4; i++)); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    if [[ -n "$STARTED" ]] && ! kill -0 "$STARTED" 2>/dev/null; then
      tail -n 15 "$DIR/log/$STARTED_NAME.out" >&2 2>/dev/null || true
      die "$STARTED_NAME exited while waiting for $what (logs: $DIR/log/)"
    fi
    sleep 0.25
  done
  die "no $what after ${WAIT_S}s (logs: $DIR/log/)"
}

stop_all() {
  local any=0
  for d in slurmd:slurmd slurmctld:slurmctld slurmdbd:slurmdbd mariadbd:mariadbd munged:munged; do
    local name=${d%%:*} prog=${d##*:} pid
    if pid="$(running_pid "$(pidfile_of "$name")" "$prog")"; then
      say "stopping $name (pid $pid)"
      any=1
      stop_pid "$name" "$pid"
    fi
  done
  (( any )) || say "nothing of $DIR runs"
  exit 0
}

# SIGTERM to one daemon, and waits (at most 30 s) until it is gone.
stop_pid() {
  local name=$1 pid=$2 i=0
  kill -TERM "$pid" 2>/dev/null || return 0
  while [[ -d /proc/$pid ]] && (( i++ < 120 )); do sleep 0.25; done
  [[ ! -d /proc/$pid ]] || die "$name (pid $pid) did not stop after 30 s"
}

# Whether the configuration was written for this folder on this host by this recipe (a folder
# copied from elsewhere, or restored from a cache, is not), before its daemons are trusted.
conf_is_ours() {
  local m; m="$(cat "$DIR/etc/machine" 2>/dev/null || true)"
  [[ "$m" == "recipe $RECIPE; folder $DIR; node $(hostname -s); "* ]] && return 0
  # Written before the machine record existed: this folder's when it names this folder.
  [[ -z "$m" && $RECIPE == 2 ]] && grep -qxF "StateSaveLocation=$DIR/state" "$CONF"
}

answers() {
  scontrol ping 2>/dev/null | grep -q 'is UP' && sinfo -h -o '%t' 2>/dev/null | grep -qvE '^(down|drain|fail|unk)' && sacct -n -X -S now-1minute >/dev/null 2>&1
}

[[ "${1:-}" == "--stop" ]] && stop_all
[[ $# -eq 0 ]] || die "unknown argument $1 (expected none, or --stop)"

if [[ -f "$CONF" ]] && conf_is_ours && command -v sinfo >/dev/null 2>&1 && answers; then
  rm -f "$DIR/unavailable"
  say "Slurm already runs ($(sinfo -V)); node: $(sinfo -h -N -o '%N %t %c CPUs %m MiB %G' | head -1)"
  say "export SLURM_CONF=$CONF"
  exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
  # The daemons need root (munged, slurmd as SlurmdUser=root): rerun as root when sudo can.
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then exec sudo -n -E bash "${BASH_SOURCE[0]}" "$@"; fi
  unavailable "needs root (apt-get, munged, slurmd) and sudo -n is not possible"
fi

# --- packages ---------------------------------------------------------------------------------
missing=()
for p in "${PACKAGES[@]}"; do
  [[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)" == "install ok installed" ]] || missing+=("$p")
done
if (( ${#missing[@]} )); then
  command -v apt-get >/dev/null 2>&1 || unavailable "no apt-get to install ${missing[*]} (Debian's packages; elsewhere install Slurm 22.05+ with slurmdbd, munge and MariaDB)"
  say "installing ${missing[*]} (packages kept in $APT_CACHE)"
  export DEBIAN_FRONTEND=noninteractive
  mkdir -p "$APT_CACHE/partial"
  install_pkgs() { apt-get install -y -qq --no-install-recommends -o Dir::Cache::archives="$APT_CACHE" "${missing[@]}" >/dev/null; }
  # Package lists already present are tried first; stale or missing ones are updated, then tried again.
  if ! { apt-cache show "${missing[@]}" >/dev/null 2>&1 && install_pkgs; }; then
    apt-get update -qq || unavailable "apt-get update failed (no package source reachable)"
    apt-cache show "${missing[@]}" >/dev/null 2>&1 || unavailable "the package sources have no ${missing[*]} (Debian's Slurm packages)"
    install_pkgs || die "apt-get install ${missing[*]} failed"
  fi
fi
for b in munged mariadbd mariadb-install-db slurmdbd slurmctld slurmd sacctmgr sbatch sacct; do
  command -v "$b" >/dev/null 2>&1 || die "$b is missing after installing ${PACKAGES[*]}"
done
rm -f "$DIR/unavailable"

# --- folders and configuration (written once) --------------------------------------------------
mkdir -p "$DIR"/{etc,run,log,state,spool,munge/run,mysql/run}
chmod 0755 "$DIR" "$DIR/munge" "$DIR/munge/run"
id mysql >/dev/null 2>&1 || die "user mysql is missing (package mariadb-server)"
chown mysql: "$DIR/mysql" "$DIR/mysql/run"

if [[ ! -f "$DIR/ports" ]]; then
  base="${EXPBENCH_SLURM_PORT_BASE:-$(( 20000 + $(printf '%s' "$DIR" | cksum | cut -d' ' -f1) % 4000 * 10 ))}"
  echo "$base" > "$DIR/ports"
fi
BASE="$(cat "$DIR/ports")"
CTLD_PORT=$BASE; SLURMD_PORT=$((BASE + 1)); DBD_PORT=$((BASE + 2)); DB_PORT=$((BASE + 3))
NODE="$(hostname -s)"

if [[ ! -f "$DIR/munge/munge.key" ]]; then
  (umask 077; head -c 1024 /dev/urandom > "$DIR/munge/munge.key.tmp")
  mv "$DIR/munge/munge.key.tmp" "$DIR/munge/munge.key"
  chmod 0400 "$DIR/munge/munge.key"
fi

# This machine as slurmd sees it: NodeName=… CPUs=… Boards=… SocketsPerBoard=… CoresPerSocket=… ThreadsPerCore=… RealMemory=…
node_line="$(slurmd -C | head -1 | sed -E 's/^NodeName=[^ ]+ //')"
[[ "$node_line" == CPUs=* ]] || die "slurmd -C printed no node line: $node_line"
machine="recipe $RECIPE; folder $DIR; node $NODE; $node_line; ports $BASE"
if [[ -f "$CONF" && "$(cat "$DIR/etc/machine" 2>/dev/null)" != "$machine" ]]; then
  # A folder made on another machine or by another recipe: its daemons (if any run) are stopped, its
  # configuration and the controller's state (jobs and nodes of that configuration) made anew; the
  # accounting database stays.
  say "the configuration in $DIR/etc was made for another machine or recipe: writing it anew"
  for d in slurmd slurmctld slurmdbd; do
    if pid="$(running_pid "$(pidfile_of "$d")" "$d")"; then stop_pid "$d" "$pid"; fi
  done
  rm -rf "$DIR/state" "$DIR/spool" && mkdir -p "$DIR/state" "$DIR/spool"
  rm -f "$CONF" "$DBD_CONF"
fi
if [[ ! -f "$DBD_CONF" ]]; then
  pass="$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  (umask 077; cat > "$DBD_CONF.tmp" <<EOF
# Written by scripts/setup-slurm.sh (mode 0600: it holds the accounting database's password).
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCK
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$DBD_PORT
SlurmUser=root
LogFile=$DIR/log/slurmdbd.log
PidFile=$DIR/run/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageUser=slurm
StoragePass=$pass
StorageLoc=slurm_acct_db
EOF
  )
  mv "$DBD_CONF.tmp" "$DBD_CONF"
fi

if [[ ! -f "$CONF" ]]; then
  cat > "$CONF.tmp" <<EOF
# Written by scripts/setup-slurm.sh: a one-node Slurm for EXP-Bench Workbench's tests and local runs.
ClusterName=expbench
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCK
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
GresTypes=gpu
ReturnToService=2
InactiveLimit=0
PropagateResourceLimits=NONE
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=$DBD_PORT
AccountingStoragePass=$MUNGE_SOCK
AccountingStorageTRES=gres/gpu
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
NodeName=$NODE NodeAddr=127.0.0.1 $node_line Gres=gpu:1 State=UNKNOWN
PartitionName=main Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
PartitionName=short Nodes=$NODE MaxTime=10 State=UP
EOF
  # No GPU here: the gres is declared on /dev/null so that GPU requests are accepted (and held in tests).
  echo "NodeName=$NODE Name=gpu File=/dev/null" > "$DIR/etc/gres.conf"
  mv "$CONF.tmp" "$CONF"
  printf '%s\n' "$machine" > "$DIR/etc/machine"
fi
printf 'export SLURM_CONF=%q\n' "$CONF" > "$DIR/env.sh"

# Starts a daemon in the background (outliving this script) unless it runs already.
start() {
  local name=$1 prog=$2; shift 2
  STARTED=""; STARTED_NAME=$name
  if pid="$(running_pid "$(pidfile_of "$name")" "$prog")"; then say "$name runs (pid $pid)"; return 0; fi
  say "starting $name (logs: $DIR/log/)"
  setsid nohup "$@" >>"$DIR/log/$name.out" 2>&1 < /dev/null &
  STARTED=$!
}

# --- munge ---------------------------------------------------------------------------------
start munged munged munged --foreground --key-file="$DIR/munge/munge.key" --socket="$MUNGE_SOCK" \
  --pid-file="$DIR/run/munged.pid" --log-file="$DIR/log/munged.log" --seed-file="$DIR/munge/munged.seed"
wait_for "answer from munged" munge -n -S "$MUNGE_SOCK"

# --- MariaDB ---------------------------------------------------------------------------------
if [[ ! -d "$DIR/mysql/data/mysql" ]]; then
  say "creating the accounting database's data folder"
  mariadb-install-db --no-defaults --user=mysql --datadir="$DIR/mysql/data" --auth-root-authentication-method=socket \
    --skip-test-db > "$DIR/log/mariadb-install.log" 2>&1 || die "mariadb-install-db failed (see $DIR/log/mariadb-install.log)"
fi
start mariadbd mariadbd mariadbd --no-defaults --user=mysql --datadir="$DIR/mysql/data" --socket="$DB_SOCK" \
  --port="$DB_PORT" --bind-address=127.0.0.1 --pid-file="$(pidfile_of mariadbd)" --log-error="$DIR/mysql/run/error.log" \
  --innodb-buffer-pool-size=256M --innodb-lock-wait-timeout=900
wait_for "answer from MariaDB" mariadb --no-defaults -S "$DB_SOCK" -u root -e 'SELECT 1'
pass="$(sed -n 's/^StoragePass=//p' "$DBD_CONF")"
mariadb --no-defaults -S "$DB_SOCK" -u root <<EOF
CREATE DATABASE IF NOT EXISTS slurm_acct_db;
CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY '$pass';
CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY '$pass';
ALTER USER 'slurm'@'127.0.0.1' IDENTIFIED BY '$pass';
ALTER USER 'slurm'@'localhost' IDENTIFIED BY '$pass';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';
EOF

# --- slurmdbd, the cluster ---------------------------------------------------------------------
# slurmdbd reads slurmdbd.conf from the folder of SLURM_CONF.
start slurmdbd slurmdbd slurmdbd -D
wait_for "answer from slurmdbd (sacctmgr list cluster)" sacctmgr -n list cluster
if ! sacctmgr -n -P list cluster format=cluster | grep -qx expbench; then
  say "registering the cluster expbench"
  sacctmgr -i add cluster expbench >/dev/null
fi

# --- slurmctld, slurmd ---------------------------------------------------------------------------
start slurmctld slurmctld slurmctld -D -f "$CONF"
wait_for "slurmctld (scontrol ping)" bash -c 'scontrol ping | grep -q "is UP"'
start slurmd slurmd slurmd -D -f "$CONF"
node_up() { sinfo -h -N -n "$NODE" -o '%t' | grep -qE '^(idle|mix|alloc|comp)'; }
for ((i = 0; i < WAIT_S * 4; i++)); do
  node_up && break
  state="$(sinfo -h -N -n "$NODE" -o '%t' 2>/dev/null || true)"
  # A node drained by an earlier configuration problem comes back once its slurmd registered.
  if [[ "$state" == drain* || "$state" == down* ]] && pgrep -F "$DIR/run/slurmd.pid" >/dev/null 2>&1; then
    scontrol update nodename="$NODE" state=resume >/dev/null 2>&1 || true
  fi
  sleep 0.25
done
node_up || die "node $NODE is not up: $(sinfo -h -N -n "$NODE" -o '%t %E' 2>&1) (logs: $DIR/log/)"
wait_for "answer from sacct" sacct -n -X -S now-1minute

say "Slurm runs: $(sinfo -V); node: $(sinfo -h -N -o '%N %t %c CPUs %m MiB %G' | head -1)"
say "export SLURM_CONF=$CONF"
