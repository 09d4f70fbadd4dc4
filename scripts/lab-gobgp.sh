#!/usr/bin/env bash
# The ribbridge lab's second router family: GoBGP (Debian's gobgpd 3.10,
# scripts/install-deps.sh). A GoBGP "router" in its own network namespace
# with N GoBGP peers, each in a namespace of its own on a veth, every BGP
# session eBGP and carrying IPv4 unicast, VPNv4 (l3vpn-ipv4-unicast) and
# EVPN (l2vpn-evpn) unless `--families` says otherwise. The router's gobgpd exports BMP to a station at
# ADDR:PORT as seen from rb-gobgp (run the station inside rb-gobgp on
# 127.0.0.1). Routes are injected on the peers with the gobgp CLI (`lab-gobgp.sh
# gobgp peer1 global rib add 192.0.2.10/32`): GoBGP exports the routes it
# receives from peers (its Adj-RIB-In, pre- or post-policy); its own
# `global rib add` routes reach a station only as Loc-RIB (local-rib policy).
#
# Usage: `lab-gobgp.sh -h` (the text is usage() below, the only copy).
#
# Topology (peer i = 1..N, router AS 64513, peers AS 64512):
#   rb-gobgp:rb-gp<i> 198.19.<i>.1/24  <-veth->  rb-gobgp-peer<i>:eth0 198.19.<i>.2/24
#
# Independent of scripts/lab.sh (other namespaces, other directory): both can
# be up at once, and lab.sh's `down` leaves this one alone. Its users hold
# the same lab lock (/run/ribbridge-lab.lock) as lab.sh's. Every file it makes
# is under $GOBGP_DIR (/run/ribbridge-lab-gobgp); `down` removes exactly that,
# the rb-gobgp* namespaces and the daemons in them.
set -Eeuo pipefail

GOBGP_DIR=/run/ribbridge-lab-gobgp
ROUTER=rb-gobgp
PEER_PREFIX=rb-gobgp-peer
PEER_AS=64512
ROUTER_AS=64513
POLICIES="pre-policy post-policy local-rib all"
FAMILIES_ALL="ipv4-unicast,l3vpn-ipv4-unicast,l2vpn-evpn"
WAIT_SECS=${RIBBRIDGE_LAB_WAIT:-60}

die() { echo "lab-gobgp.sh: $*" >&2; exit 1; }
log() { echo "lab-gobgp.sh: $*" >&2; }

usage() {
    cat <<'EOF'
usage: lab-gobgp.sh COMMAND [ARGS...]   (as root, except -h)

  lab-gobgp.sh up [--peers N] [--families LIST] [--bmp ADDR:PORT] [--bmp-policy pre-policy|post-policy|local-rib|all] [--stats-secs S] [--no-wait]
        router rb-gobgp + N peers rb-gobgp-peer<i> (default 2), each a
        gobgpd; waits for every BGP session to be Established unless
        --no-wait; --families: the sessions' GoBGP afi-safi names, comma
        separated (default ipv4-unicast,l3vpn-ipv4-unicast,l2vpn-evpn);
        --bmp: the router's gobgpd exports BMP to the station at
        ADDR:PORT (as seen from rb-gobgp) with route-monitoring-policy
        --bmp-policy (default pre-policy) and a statistics report every S
        seconds (default 15, GoBGP's minimum; 0: none); GoBGP notices a
        lost station only when it writes to it
  lab-gobgp.sh down
        removes every namespace, daemon and file this lab made
  lab-gobgp.sh status
        each namespace's gobgpd pid and BGP sessions
  lab-gobgp.sh exec NAMESPACE CMD...
        run CMD in NAMESPACE
  lab-gobgp.sh gobgp NAMESPACE ARGS...
        the gobgp CLI against NAMESPACE's gobgpd (e.g. `gobgp peer1 global
        rib add 192.0.2.10/32`, `gobgp router global rib -j`)
  lab-gobgp.sh kill NAMESPACE [SIGNAL]
        signal NAMESPACE's gobgpd (default KILL, a crash); waits until it is
        gone
  lab-gobgp.sh start NAMESPACE
        start NAMESPACE's gobgpd again with the lab's configuration (an empty
        RIB: injected routes are gone)
  lab-gobgp.sh -h | --help
        this text

NAMESPACE: rb-gobgp (or router) or rb-gobgp-peer<i> (or peer<i>, <i>).
Environment: RIBBRIDGE_LAB_WAIT (seconds `up` and `start` wait for the
sessions, default 60).
EOF
}

usage_error() { # COMMAND MESSAGE
    echo "lab-gobgp.sh: $2" >&2
    if [[ -n $1 ]]; then
        usage | grep -E "^  lab-gobgp\.sh $1( |\$)" | sed 's/^  /usage: /' >&2 || true
    fi
    echo "(lab-gobgp.sh -h for all commands)" >&2
    exit 2
}

need_root() { [[ $(id -u) -eq 0 ]] || die "must run as root (it creates network namespaces)"; }

check_gobgp() {
    local v
    v=$(gobgpd --version 2>/dev/null) || true
    [[ $v == *"version 3."* ]] || die "gobgpd 3.x is not installed (found: '${v:-nothing}'); run: scripts/install-deps.sh"
    command -v gobgp >/dev/null || die "the gobgp CLI is missing; run: scripts/install-deps.sh"
}

load_state() {
    [[ -f $GOBGP_DIR/state ]] || die "no GoBGP lab is up (no $GOBGP_DIR/state); run: lab-gobgp.sh up"
    # shellcheck disable=SC1091
    source "$GOBGP_DIR/state"
}

namespaces() { echo "$ROUTER"; for ((i = 1; i <= PEERS; i++)); do echo "$PEER_PREFIX$i"; done; }

# The namespace a NAMESPACE argument names.
ns_of() { # ARG CMD
    local ns=$1
    case $ns in
        router | "$ROUTER") ns=$ROUTER ;;
        "$PEER_PREFIX"[0-9]*) ;;
        peer[0-9]*) ns=$PEER_PREFIX${ns#peer} ;;
        [0-9]*) ns=$PEER_PREFIX$ns ;;
    esac
    ip netns list | grep -qE "^$ns\b" || die "$2: no namespace $ns (this lab has $ROUTER and $PEER_PREFIX""1..$PEERS)"
    echo "$ns"
}

# --- configuration -------------------------------------------------------------

afi_safis() {
    local f
    for f in ${FAMILIES//,/ }; do
        printf '  [[neighbors.afi-safis]]\n    [neighbors.afi-safis.config]\n      afi-safi-name = "%s"\n' "$f"
    done
}

# A neighbor with a 1 s connect retry: a restarted peer is back at once.
neighbor() { # ADDRESS AS
    cat <<EOF
[[neighbors]]
  [neighbors.config]
    neighbor-address = "$1"
    peer-as = $2
  [neighbors.timers.config]
    connect-retry = 1
EOF
    afi_safis
}

router_conf() {
    cat <<EOF
# lab-gobgp.sh: the GoBGP router
[global.config]
  as = $ROUTER_AS
  router-id = "198.19.0.1"
EOF
    for ((i = 1; i <= PEERS; i++)); do neighbor "198.19.$i.2" "$PEER_AS"; done
    if [[ -n $BMP ]]; then
        cat <<EOF
[[bmp-servers]]
  [bmp-servers.config]
    address = "${BMP%:*}"
    port = ${BMP##*:}
    route-monitoring-policy = "$BMP_POLICY"
    statistics-timeout = $STATS_SECS
    sys-name = "$ROUTER"
EOF
    fi
}

peer_conf() { # I
    cat <<EOF
# lab-gobgp.sh: GoBGP peer $1
[global.config]
  as = $PEER_AS
  router-id = "198.19.$1.2"
  local-address-list = ["198.19.$1.2"]
EOF
    neighbor "198.19.$1.1" "$ROUTER_AS"
}

# --- daemons ---------------------------------------------------------------------

# Start NS's gobgpd in the background: its gRPC API on 127.0.0.1:50051 of
# the namespace (the CLI's default), its log in $GOBGP_DIR/NS/gobgpd.log.
start_gobgpd() { # NS
    local ns=$1 dir=$GOBGP_DIR/$1
    local err
    err=$(gobgpd -f "$dir/gobgpd.toml" -t toml --dry-run 2>&1) || die "gobgpd rejects $dir/gobgpd.toml: $err"
    ip netns exec "$ns" setsid gobgpd -f "$dir/gobgpd.toml" -t toml -p -l info \
        --api-hosts 127.0.0.1:50051 --pprof-disable </dev/null >>"$dir/gobgpd.log" 2>&1 &
    echo $! >"$dir/gobgpd.pid"
}

# Sessions of NS in state Established (the CLI's JSON).
established() { # NS
    ip netns exec "$1" gobgp neighbor -j 2>/dev/null | grep -o '"session_state":6' | wc -l
}

wait_established() { # NS WANT
    # gobgpd has no event a shell can wait on: poll its neighbors with a
    # deadline. Only the lab set-up waits like this; tests await events.
    local deadline=$((SECONDS + WAIT_SECS)) n=0
    while ((SECONDS < deadline)); do
        n=$(established "$1") || n=0
        ((n >= $2)) && { log "$1 has $n/$2 sessions Established"; return 0; }
        sleep 0.2
    done
    die "$1: only $n of $2 BGP sessions reached Established within ${WAIT_SECS}s; see $GOBGP_DIR/*/gobgpd.log"
}

# The API answers: the CLI can talk to NS's gobgpd.
wait_api() { # NS
    local deadline=$((SECONDS + WAIT_SECS))
    while ((SECONDS < deadline)); do
        ip netns exec "$1" gobgp global >/dev/null 2>&1 && return 0
        kill -0 "$(cat "$GOBGP_DIR/$1/gobgpd.pid")" 2>/dev/null || die "gobgpd of $1 exited; see $GOBGP_DIR/$1/gobgpd.log"
        sleep 0.1
    done
    die "gobgpd of $1 does not answer its API within ${WAIT_SECS}s; see $GOBGP_DIR/$1/gobgpd.log"
}

# --- up / down -------------------------------------------------------------------

cmd_up() {
    local peers=2 wait=1 bmp="" policy=pre-policy stats=15 families=$FAMILIES_ALL
    while [[ $# -gt 0 ]]; do
        case $1 in
            --peers) peers=${2:?--peers needs a number}; shift 2 ;;
            --families) families=${2:?--families needs a list}; shift 2 ;;
            --bmp) bmp=${2:?--bmp needs ADDR:PORT}; shift 2 ;;
            --bmp-policy) policy=${2:?--bmp-policy needs a policy}; shift 2 ;;
            --stats-secs) stats=${2:?--stats-secs needs seconds}; shift 2 ;;
            --no-wait) wait=0; shift ;;
            *) usage_error up "up: unknown argument '$1'" ;;
        esac
    done
    if ! [[ $peers =~ ^[0-9]+$ ]] || ((peers < 1 || peers > 50)); then
        usage_error up "up: --peers must be 1..50, got '$peers'"
    fi
    if [[ -n $bmp ]] && ! [[ $bmp =~ ^[0-9.]+:[0-9]+$ ]]; then
        usage_error up "up: --bmp must be IPv4ADDR:PORT (like 127.0.0.1:11019), got '$bmp'"
    fi
    [[ $families =~ ^[a-z0-9-]+(,[a-z0-9-]+)*$ ]] \
        || usage_error up "up: --families must be GoBGP afi-safi names separated by commas (like $FAMILIES_ALL), got '$families'"
    [[ " $POLICIES " == *" $policy "* ]] || usage_error up "up: --bmp-policy must be one of: $POLICIES (got '$policy')"
    # GoBGP refuses a statistics-timeout below 15 (other than 0) in its file.
    if ! [[ $stats =~ ^[0-9]+$ ]] || ((stats != 0 && (stats < 15 || stats > 65535))); then
        usage_error up "up: --stats-secs must be 0 or 15..65535 (GoBGP's range), got '$stats'"
    fi
    [[ -e $GOBGP_DIR/state ]] && die "a GoBGP lab is already up; run lab-gobgp.sh down first"
    if ip netns list | grep -qE "^rb-gobgp(-peer[0-9]+)?\b"; then
        die "rb-gobgp* namespaces exist without lab state (a crashed run?); run lab-gobgp.sh down first"
    fi
    check_gobgp
    PEERS=$peers BMP=$bmp BMP_POLICY=$policy STATS_SECS=$stats FAMILIES=$families
    mkdir -p "$GOBGP_DIR"
    trap 'rc=$?; if [[ $rc -ne 0 ]]; then log "up failed; tearing down"; cmd_down >/dev/null 2>&1 || true; fi' EXIT
    {
        echo "PEERS=$PEERS"
        echo "BMP=$BMP"
        echo "BMP_POLICY=$BMP_POLICY"
        echo "STATS_SECS=$STATS_SECS"
        echo "FAMILIES=$FAMILIES"
    } >"$GOBGP_DIR/state.tmp"
    mv "$GOBGP_DIR/state.tmp" "$GOBGP_DIR/state"
    local ns i
    for ns in $(namespaces); do
        ip netns add "$ns"
        ip -n "$ns" link set lo up
        mkdir -p "$GOBGP_DIR/$ns"
    done
    for ((i = 1; i <= PEERS; i++)); do
        ip link add "rb-gp$i" netns "$ROUTER" type veth peer name eth0 netns "$PEER_PREFIX$i"
        ip -n "$ROUTER" addr add "198.19.$i.1/24" dev "rb-gp$i"
        ip -n "$PEER_PREFIX$i" addr add "198.19.$i.2/24" dev eth0
        ip -n "$ROUTER" link set "rb-gp$i" up
        ip -n "$PEER_PREFIX$i" link set eth0 up
        peer_conf "$i" >"$GOBGP_DIR/$PEER_PREFIX$i/gobgpd.toml"
    done
    router_conf >"$GOBGP_DIR/$ROUTER/gobgpd.toml"
    for ns in $(namespaces); do start_gobgpd "$ns"; done
    for ns in $(namespaces); do wait_api "$ns"; done
    [[ $wait -eq 1 ]] && wait_established "$ROUTER" "$PEERS"
    trap - EXIT
    log "GoBGP lab up: $PEERS peers, families $FAMILIES${BMP:+, BMP ($BMP_POLICY, statistics every ${STATS_SECS}s) to $BMP}"
}

kill_ns_procs() { # NS
    local pids
    pids=$(ip netns pids "$1" 2>/dev/null || true)
    [[ -z $pids ]] && return 0
    # shellcheck disable=SC2086
    kill $pids 2>/dev/null || true
    local deadline=$((SECONDS + 5))
    while ((SECONDS < deadline)) && [[ -n $(ip netns pids "$1" 2>/dev/null) ]]; do sleep 0.05; done
    pids=$(ip netns pids "$1" 2>/dev/null || true)
    # shellcheck disable=SC2086
    if [[ -n $pids ]]; then kill -9 $pids 2>/dev/null || true; fi
}

cmd_down() {
    local ns
    # Every rb-gobgp / rb-gobgp-peerN namespace is ours, with or without
    # state (a crashed run leaves namespaces and no state).
    for ns in $(ip netns list | awk '{print $1}' | grep -E '^rb-gobgp(-peer[0-9]+)?$' || true); do
        kill_ns_procs "$ns"
        ip netns del "$ns"
    done
    rm -rf "$GOBGP_DIR"
    log "GoBGP lab down"
}

cmd_status() {
    load_state
    echo "GoBGP lab: $PEERS peers, families $FAMILIES${BMP:+, BMP ($BMP_POLICY, statistics every ${STATS_SECS}s) to $BMP}"
    local ns pid
    for ns in $(namespaces); do
        pid=$(cat "$GOBGP_DIR/$ns/gobgpd.pid" 2>/dev/null || true)
        kill -0 "${pid:-0}" 2>/dev/null || pid="(not running)"
        printf '%-16s gobgpd %s  established %s\n' "$ns" "$pid" "$(established "$ns" 2>/dev/null || echo 0)"
    done
}

cmd_kill() { # NS [SIGNAL]
    [[ $# -ge 1 && $# -le 2 ]] || usage_error kill "kill: NAMESPACE is required, then at most a SIGNAL"
    load_state
    local ns sig=${2:-KILL} pid deadline
    ns=$(ns_of "$1" kill)
    pid=$(cat "$GOBGP_DIR/$ns/gobgpd.pid" 2>/dev/null) || die "kill: no pid file for gobgpd in $ns"
    kill -s "${sig#SIG}" "$pid" 2>/dev/null || die "kill: gobgpd (pid $pid) of $ns is not running"
    case ${sig#SIG} in
        KILL | TERM | 9 | 15)
            deadline=$((SECONDS + 5))
            while kill -0 "$pid" 2>/dev/null; do
                ((SECONDS < deadline)) || die "kill: gobgpd (pid $pid) of $ns survived SIG${sig#SIG} for 5 s"
                sleep 0.05
            done
            ;;
    esac
}

cmd_start() { # NS
    [[ $# -eq 1 ]] || usage_error start "start: one NAMESPACE"
    load_state
    local ns pid
    ns=$(ns_of "$1" start)
    pid=$(cat "$GOBGP_DIR/$ns/gobgpd.pid" 2>/dev/null || true)
    if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then die "start: gobgpd of $ns is running (pid $pid)"; fi
    start_gobgpd "$ns"
    wait_api "$ns"
}

# --- main ---------------------------------------------------------------------------

if [[ $# -eq 0 ]]; then
    usage >&2
    exit 2
fi
sub=$1; shift
case $sub in
    -h | --help) usage; exit 0 ;;
    up) need_root; cmd_up "$@" ;;
    down)
        [[ $# -eq 0 ]] || usage_error down "down: takes no argument"
        need_root; cmd_down ;;
    status)
        [[ $# -eq 0 ]] || usage_error status "status: takes no argument"
        need_root; cmd_status ;;
    exec)
        [[ $# -ge 2 ]] || usage_error exec "exec: NAMESPACE and CMD are required"
        need_root; load_state
        ns=$(ns_of "$1" exec); shift
        ip netns exec "$ns" "$@" ;;
    gobgp)
        [[ $# -ge 2 ]] || usage_error gobgp "gobgp: NAMESPACE and ARGS are required"
        need_root; load_state
        ns=$(ns_of "$1" gobgp); shift
        ip netns exec "$ns" gobgp "$@" ;;
    kill) need_root; cmd_kill "$@" ;;
    start) need_root; cmd_start "$@" ;;
    *) usage_error "" "unknown command '$sub'" ;;
esac
