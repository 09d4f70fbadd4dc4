#!/usr/bin/env bash
# The ribbridge lab: one router and N nodes in network namespaces, each running
# its own zebra and bgpd, the nodes advertising the VIPs of their kernel table
# 198 to the router over eBGP. The one builder of the test topology: the demo,
# the netns tests and the benchmarks all use it.
#
# Usage: `lab.sh -h` (the text is usage() below, the only copy).
#
# Topology (node i = 1..N, router AS 64513, nodes AS 64512):
#   rb-router:rb-n<i> 198.18.<i>.1/24 fdbb:0:0:<i>::1/64  <-veth->  rb-node<i>:eth0 198.18.<i>.2/24 fdbb:0:0:<i>::2/64
#
# The nodes' frr.conf are rendered by `ribbridge render` (one source of FRR
# configuration) from the lab's peer mapping ($LAB_DIR/frr-peers.json) with
# the profile's template: scripts/lab-node.conf.j2 (default) or
# scripts/lab-node-frrk8s.conf.j2 (`--profile frr-k8s`: OpenShift's day-2
# shape, frr-k8s's rendering and its raw configuration); the binary is $RIBBRIDGE_BIN, else the newer of
# target/release/ribbridge and target/debug/ribbridge.
#
# Every file the lab makes is under $LAB_DIR (default /run/ribbridge-lab) or,
# on 10.x, under the FRR root's /run/ribbridge-lab and /run/frr/<ns>; `down`
# removes exactly those, the rb-* namespaces and the daemons in them.
set -Eeuo pipefail

LAB_DIR=/run/ribbridge-lab  # fixed: the daemons' configs name it
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PROFILES="default frr-k8s"
CACHE=${RIBBRIDGE_CACHE:-/var/cache/ribbridge}
ROUTER=rb-router
NODE_AS=64512
ROUTER_AS=64513
VIP_TABLE=198
VIP_PROTO=248
WAIT_SECS=${RIBBRIDGE_LAB_WAIT:-60}

die() { echo "lab.sh: $*" >&2; exit 1; }
log() { echo "lab.sh: $*" >&2; }

# The one usage text: `lab.sh -h` prints it, and every usage error quotes
# the lines of its command from it.
usage() {
    cat <<'EOF'
usage: lab.sh COMMAND [ARGS...]   (as root, except -h, status and sockdir)

  lab.sh up --frr 8.4|10.3|10.7 [--nodes N] [--vip PREFIX]... [--bmp ADDR:PORT] [--profile default|frr-k8s] [--graceful-restart] [--no-wait]
        router + N nodes (default 2; VIP default 192.0.2.10/32); waits for
        every BGP session to be Established unless --no-wait; --bmp: the
        router's bgpd (-M bmp) exports post-policy Adj-RIB-In (IPv4 and
        IPv6) to the BMP station at ADDR:PORT (as seen from rb-router);
        --profile: the nodes' frr.conf template, default
        scripts/lab-node.conf.j2, frr-k8s scripts/lab-node-frrk8s.conf.j2
        (OpenShift's day-2 shape: frr-k8s's per-peer <peer>-in/-out
        route-maps and prefix-lists advertising nothing, graceful-restart
        preserve-fw-state, disable-connected-check; the VIPs through the raw
        configuration: redistribute table-direct 198 route-map
        KUBE-VIP-ROUTES-V4/-V6, permit 10 on KUBE-VIP-PREFIXES-V4/-V6, deny
        20, and route-map <peer>-out permit 100 on the same prefix-list;
        8.4: ip import-table 198, redistribute table 198); --graceful-restart:
        every node peer with frr-k8s's enableGracefulRestart (`neighbor X
        graceful-restart`: the router, a helper by default, keeps a node's
        routes as stale for 120 s when its session drops without a
        withdrawal)
  lab.sh switch NODE [--frr 8.4|10.3|10.7] [--profile default|frr-k8s]
        replace NODE's FRR in place, as an upgrade or a handover of its pod
        does: stop its daemons (SIGTERM), render its frr.conf for the
        release and profile (default: the node's current ones), start that
        release's daemons, wait for every session; the socket directory
        (`lab.sh sockdir NODE`) and the log directory stay the same paths,
        bind-mounted into another release's root, as a hostPath outlives
        the pod
  lab.sh down
        removes every namespace, daemon, writer, backend and file the lab
        made
  lab.sh status
        the release, the VIPs, and each namespace's release, profile,
        sockets and pids
  lab.sh sockdir NAMESPACE
        the directory holding NAMESPACE's zserv.api, zebra.vty, bgpd.vty
  lab.sh exec NAMESPACE CMD...
        run CMD in NAMESPACE (inside the FRR root on 10.x)
  lab.sh vtysh NAMESPACE COMMAND...
        vtysh -c COMMAND... against NAMESPACE's daemons
  lab.sh vip-add NODE PREFIX [--with-address | --route-only]
        kube-vip's add: the address on lo, then the route (dev lo table
        198 proto 248); --route-only writes the route alone (the default
        when LAB_VIP_ADDRESS=0, as the netns tests set it)
  lab.sh vip-del NODE PREFIX [--with-address | --route-only]
        kube-vip's delete: the route, then the address (if it is there)
  lab.sh vip-reassert NODE PREFIX
        kube-vip's heartbeat: a replace of the route, realm 1 <-> 2
  lab.sh kube-vip NODE start PREFIX [--health URL] [--interval S] [--timeout S] [--clean-table]
        a kube-vip v1.2.3 (routing-table mode) for the VIP PREFIX, in the
        background in NODE's namespace (scripts/lab-kube-vip.py): every
        --interval seconds (default 5; the first one interval after start)
        GET URL (healthy iff 200 within --timeout, default the interval; no
        --health: always healthy); healthy: the address on lo if missing,
        the route once, then a replace with the realm 1 <-> 2 on every
        tick; unhealthy: the route (if this instance added it), then the
        address, deleted; --clean-table: 10 s after start, delete every
        other table-198 proto-248 route. Returns once it runs; its log is
        /run/ribbridge-lab/writers/NODE/kube-vip-<prefix>.log
  lab.sh kube-vip NODE stop|kill PREFIX
        SIGTERM (stop) or SIGKILL (kill) that writer and wait until it is
        gone; neither removes its route or address (kube-vip does not)
  lab.sh backend NODE up|down|draining|slow
        NODE's OpenShift router health endpoints on 127.0.0.1:1936
        (scripts/lab-backend.py): up: /healthz and /healthz/ready 200;
        draining: /healthz 200, /healthz/ready 503 "[-]process-running
        failed: process is terminating"; slow: 200 after 10 s (past the
        writer's timeout); down: the process stopped, connections refused
  lab.sh node-config NODE FILE
        restart NODE's FRR daemons with FILE as their frr.conf
  lab.sh reload NODE [FILE]
        apply FILE (default: NODE's frr.conf as the lab wrote it) to NODE's
        running daemons the way frr-k8s's reloader does: frr-reload.py
        --test, then --reload --overwrite (FRR's own, inside the FRR root on
        10.x); prints both outputs (also kept in NODE's frr-reload.log);
        fails when either fails. --overwrite writes the running config to
        /etc/frr/NODE/frr.conf (in the root on 10.x), not to the file the
        lab's daemons start from
  lab.sh kill NAMESPACE zebra|bgpd|mgmtd [SIGNAL]
        signal one daemon (default KILL, a crash); waits until it is gone
  lab.sh start NAMESPACE zebra|bgpd|mgmtd
        start it again with the lab's configuration
  lab.sh -h | --help
        this text

NAMESPACE: rb-router or rb-node<i>; NODE: rb-node<i>, node<i> or <i>
(kill and start also take a NODE).
Environment: RIBBRIDGE_BIN (the ribbridge that renders the nodes' frr.conf;
default: the newer of target/{release,debug}/ribbridge), RIBBRIDGE_CACHE
(FRR roots, default /var/cache/ribbridge), RIBBRIDGE_LAB_WAIT (seconds
`up` waits for the sessions, default 60).
EOF
}

# A usage error: MESSAGE, then COMMAND's lines of the usage text; exit 2.
usage_error() { # COMMAND MESSAGE
    echo "lab.sh: $2" >&2
    if [[ -n $1 ]]; then
        usage | grep -E "^  lab\.sh $1( |\$)" | sed 's/^  /usage: /' >&2 || true
    fi
    echo "(lab.sh -h for all commands)" >&2
    exit 2
}

need_root() { [[ $(id -u) -eq 0 ]] || die "must run as root (it creates network namespaces)"; }

# --- state -------------------------------------------------------------------

load_state() {
    [[ -f $LAB_DIR/state ]] || die "no lab is up (no $LAB_DIR/state); run: lab.sh up --frr VERSION --nodes N"
    # shellcheck disable=SC1091
    source "$LAB_DIR/state"
    PROFILE=${PROFILE:-default}
}

# The nodes' frr.conf template of a profile.
template_for() { # PROFILE
    case $1 in
        default) echo "$REPO/scripts/lab-node.conf.j2" ;;
        frr-k8s) echo "$REPO/scripts/lab-node-frrk8s.conf.j2" ;;
        *) die "unknown profile '$1' (profiles: $PROFILES)" ;;
    esac
}

# FRR root for a release: "" (the host) for 8.4, a debootstrap root for 10.x.
frr_root_for() {
    case $1 in
        8.4) echo "" ;;
        10.3 | 10.7) echo "$CACHE/frr-$1" ;;
        *) die "unknown FRR version '$1' (supported: 8.4, 10.3, 10.7)" ;;
    esac
}

check_frr() { # VERSION
    local root; root=$(frr_root_for "$1")
    local out
    if [[ -z $root ]]; then
        out=$(/usr/lib/frr/zebra --version 2>/dev/null | head -1) || true
    else
        out=$(chroot "$root" /usr/lib/frr/zebra --version 2>/dev/null | head -1) || true
    fi
    [[ $out == *"version $1"* ]] || die "FRR $1 is not installed (found: '${out:-nothing}'); run: scripts/install-frr.sh $1"
}

namespaces() { echo "$ROUTER"; for ((i = 1; i <= NODES; i++)); do echo "rb-node$i"; done; }

# Run a command in NS, inside the FRR root when there is one. In the
# frr-k8s profile also in a UTS namespace whose hostname is NS: frr-k8s runs
# FRR on the host's network and UTS, so the system hostname its daemons and
# vtysh start with is the node's `hostname`, while the lab's namespaces share
# this machine's; mgmtd (which reads no file) and vtysh would print
# `hostname <machine>` and frr-reload.py would delete it on every reload.
in_ns() { # NS CMD...
    local ns=$1; shift
    local cmd=("$@") root
    root=$(root_of "$ns")
    [[ -n $root ]] && cmd=(chroot "$root" "${cmd[@]}")
    # shellcheck disable=SC2016 # $0 and $@ are the inner shell's
    [[ $(profile_of "$ns") == frr-k8s ]] && cmd=(unshare --uts -- sh -c 'hostname "$0" && exec "$@"' "$ns" "${cmd[@]}")
    ip netns exec "$ns" "${cmd[@]}"
}

# A namespace's socket directory: where `up` made it, whatever release runs
# there now (`switch` bind-mounts it into the new release's root).
sockdir() { echo "${FRR_ROOT:-}/run/frr/$1"; }

# The release, FRR root and profile namespace NS runs now: the lab's, unless
# `switch` replaced them for a node (NODE_FRR_<ns>, NODE_PROFILE_<ns> in the
# state).
frr_of() { local v=NODE_FRR_${1//-/_}; echo "${!v:-$FRR}"; }
root_of() { frr_root_for "$(frr_of "$1")"; }
profile_of() { local v=NODE_PROFILE_${1//-/_}; echo "${!v:-${PROFILE:-default}}"; }

# --- configuration -------------------------------------------------------------

is_v6() { [[ $1 == *:* ]]; }

# The ribbridge that renders the nodes' frr.conf: $RIBBRIDGE_BIN, else the
# newer of this checkout's release and debug builds.
ribbridge_bin() {
    if [[ -n ${RIBBRIDGE_BIN:-} ]]; then
        [[ -f $RIBBRIDGE_BIN && -x $RIBBRIDGE_BIN ]] \
            || die "RIBBRIDGE_BIN=$RIBBRIDGE_BIN is not an executable file; build ribbridge (cargo build) or unset RIBBRIDGE_BIN"
        echo "$RIBBRIDGE_BIN"
        return
    fi
    local target=${CARGO_TARGET_DIR:-$REPO/target}
    local rel=$target/release/ribbridge dbg=$target/debug/ribbridge
    if [[ -x $rel && (! -x $dbg || $rel -nt $dbg) ]]; then
        echo "$rel"
    elif [[ -x $dbg ]]; then
        echo "$dbg"
    else
        die "no ribbridge binary to render the nodes' frr.conf (neither $rel nor $dbg exists); build it first: (cd $REPO && cargo build --release), or set RIBBRIDGE_BIN=/path/to/ribbridge"
    fi
}

# The lab's FRRPeerMapping (the schema `ribbridge render` reads): each node
# has its own hostOverrides entry, the router over IPv4 and IPv6, and the
# VIPs are the apiVIPs; with --graceful-restart each node peer has
# enableGracefulRestart.
lab_mapping() {
    local i v sep="" gr=""
    [[ ${GR:-0} -eq 1 ]] && gr=', "enableGracefulRestart": "true"'
    printf '{"localASN": %d,\n "apiVIPs": [' "$NODE_AS"
    for v in "${VIPS[@]}"; do printf '%s"%s"' "$sep" "$v"; sep=", "; done
    printf '],\n "hostOverrides": {'
    sep=""
    for ((i = 1; i <= NODES; i++)); do
        printf '%s\n  "rb-node%d": [{"peerAddress": "198.18.%d.1", "peerASN": %d%s}, {"peerAddress": "fdbb:0:0:%d::1", "peerASN": %d%s}]' \
            "$sep" "$i" "$i" "$ROUTER_AS" "$gr" "$i" "$ROUTER_AS" "$gr"
        sep=","
    done
    printf '}}\n'
}

# Node I's frr.conf, rendered from the lab's mapping with the profile's
# template (template_for): one source of FRR configuration.
node_conf() { # I FILE
    local i=$1 out=$2 release=10 rc=0 err template
    [[ $(frr_of "rb-node$i") == 8.4 ]] && release=8.4
    template=$(template_for "$(profile_of "rb-node$i")")
    err=$("$RIBBRIDGE" render --peers "$LAB_DIR/frr-peers.json" --template "$template" \
        --hostname "rb-node$i" --router-id "198.18.$i.2" --frr-release "$release" --out "$out" 2>&1) || rc=$?
    # 0: written; 3: the file already held this text.
    [[ $rc -eq 0 || $rc -eq 3 ]] || die "$RIBBRIDGE render failed for rb-node$i (exit $rc): $err"
    # render writes mode 0640 as root: the daemons read it as user frr.
    in_ns "rb-node$i" chown frr:frr "/run/ribbridge-lab/rb-node$i/frr.conf"
}

router_conf() {
    cat <<EOF
frr defaults datacenter
hostname $ROUTER
log file /run/ribbridge-lab/$ROUTER/frr.log informational
router bgp $ROUTER_AS
 bgp router-id 198.18.0.1
 no bgp ebgp-requires-policy
 no bgp default ipv4-unicast
 bgp bestpath as-path multipath-relax
EOF
    for ((i = 1; i <= NODES; i++)); do
        echo " neighbor 198.18.$i.2 remote-as $NODE_AS"
        echo " neighbor fdbb:0:0:$i::2 remote-as $NODE_AS"
    done
    echo " address-family ipv4 unicast"
    echo "  maximum-paths 16"
    for ((i = 1; i <= NODES; i++)); do echo "  neighbor 198.18.$i.2 activate"; done
    echo " exit-address-family"
    echo " address-family ipv6 unicast"
    echo "  maximum-paths 16"
    for ((i = 1; i <= NODES; i++)); do echo "  neighbor fdbb:0:0:$i::2 activate"; done
    echo " exit-address-family"
    if [[ -n ${BMP:-} ]]; then
        # Short retry timers: the station may start after bgpd, and a
        # restarted station should be found again within a second.
        echo " bmp targets lab"
        echo "  bmp connect ${BMP%:*} port ${BMP##*:} min-retry 100 max-retry 1000"
        echo "  bmp monitor ipv4 unicast post-policy"
        echo "  bmp monitor ipv6 unicast post-policy"
        echo " exit"
    fi
    echo "exit"
    echo "end"
}

# --- up / down -------------------------------------------------------------------

# Start daemon D of namespace NS with the lab's configuration.
run_daemon() { # NS D
    local ns=$1 d=$2 conf=/run/ribbridge-lab/$1 run=/run/frr/$1
    # mgmtd takes no -f: it starts empty and the daemons push their own.
    local cf=(-f "$conf/frr.conf")
    [[ $d == mgmtd ]] && cf=()
    # zebra exits on a netlink receive overrun: give it the 90 MB buffer
    # OpenShift's daemons file gives it (-s 90000000), or a flood of route
    # changes kills it.
    [[ $d == zebra ]] && cf+=(-s 90000000)
    # The BMP exporter is a bgpd module, loaded only when the lab has a station.
    [[ $d == bgpd && $ns == "$ROUTER" && -n ${BMP:-} ]] && cf+=(-M bmp)
    in_ns "$ns" "/usr/lib/frr/$d" -d -N "$ns" "${cf[@]}" -i "$run/$d.pid" \
        </dev/null >/dev/null 2>>"$(root_of "$ns")$conf/stderr.log" \
        || die "$d failed to start in $ns; see $LAB_DIR/$ns/frr.log"
}

start_frr() { # NS
    local ns=$1 conf=/run/ribbridge-lab/$1 run=/run/frr/$1 d root
    root=$(root_of "$ns")
    mkdir -p "$root$conf" "$root$run" "$root/etc/frr/$ns"
    # vtysh -N NS reads /etc/frr/NS/vtysh.conf and complains when it is missing.
    # frr-k8s's vtysh.conf says `service integrated-vtysh-config` (see
    # cmd_reload for why it matters).
    if [[ $(profile_of "$ns") == frr-k8s ]]; then
        echo "service integrated-vtysh-config" >"$root/etc/frr/$ns/vtysh.conf"
    else
        : >"$root/etc/frr/$ns/vtysh.conf"
    fi
    in_ns "$ns" chown frr:frr "$run" "$conf"
    # FRR 10 moved part of the configuration into mgmtd, which must start first.
    local daemons=(zebra bgpd)
    [[ $(frr_of "$ns") != 8.4 ]] && daemons=(mgmtd zebra bgpd)
    for d in "${daemons[@]}"; do run_daemon "$ns" "$d"; done
}

wait_established() {
    # bgpd has no event we can subscribe to from a shell: poll its summary
    # with a deadline. Only the lab set-up waits like this; tests await events.
    local want=$((NODES * 2)) deadline=$((SECONDS + WAIT_SECS)) n=0
    while ((SECONDS < deadline)); do
        n=$(in_ns "$ROUTER" vtysh -N "$ROUTER" -c 'show bgp summary json' 2>/dev/null \
            | grep -o '"state":"Established"' | wc -l) || n=0
        ((n >= want)) && { log "router has $n/$want sessions Established"; return 0; }
        sleep 0.2
    done
    die "only $n of $want BGP sessions reached Established within ${WAIT_SECS}s; see $LAB_DIR/*/frr.log"
}

cmd_up() {
    local frr="" nodes=2 wait=1 vips=() bmp="" profile=default gr=0
    while [[ $# -gt 0 ]]; do
        case $1 in
            --frr) frr=${2:?--frr needs a version}; shift 2 ;;
            --profile) profile=${2:?--profile needs a name}; shift 2 ;;
            --bmp) bmp=${2:?--bmp needs ADDR:PORT}; shift 2 ;;
            --nodes) nodes=${2:?--nodes needs a number}; shift 2 ;;
            --vip) vips+=("${2:?--vip needs a prefix}"); shift 2 ;;
            --graceful-restart) gr=1; shift ;;
            --no-wait) wait=0; shift ;;
            *) usage_error up "up: unknown argument '$1'" ;;
        esac
    done
    [[ -n $frr ]] || usage_error up "up: --frr VERSION is required (8.4, 10.3 or 10.7)"
    if ! [[ $nodes =~ ^[0-9]+$ ]] || ((nodes < 1 || nodes > 200)); then
        usage_error up "up: --nodes must be 1..200, got '$nodes'"
    fi
    [[ ${#vips[@]} -gt 0 ]] || vips=(192.0.2.10/32)
    [[ " $PROFILES " == *" $profile "* ]] || usage_error up "up: --profile must be one of: $PROFILES (got '$profile')"
    if [[ -n $bmp ]] && ! [[ $bmp =~ ^[0-9.]+:[0-9]+$ || $bmp =~ ^[0-9a-fA-F:]+:[0-9]+$ ]]; then
        usage_error up "up: --bmp must be ADDR:PORT (like 127.0.0.1:11019), got '$bmp'"
    fi
    local p
    for p in "${vips[@]}"; do
        [[ $p =~ ^[0-9.]+/[0-9]+$ || $p =~ ^[0-9a-fA-F:]+/[0-9]+$ ]] || die "up: '$p' is not a prefix like 192.0.2.10/32 or 2001:db8::10/128"
        # The nodes' prefix-lists come from the mapping's apiVIPs: addresses.
        [[ ${p#*/} == "$(is_v6 "$p" && echo 128 || echo 32)" ]] \
            || die "up: '$p' is not a single address: a VIP is a /32 or /128 (like 192.0.2.10/32 or 2001:db8::10/128)"
        if [[ $frr == 8.4 ]] && is_v6 "$p"; then
            die "up: FRR 8.4 cannot import an IPv6 table (ipv6 import-table exists from FRR 10.6): drop --vip $p or use 10.3/10.7"
        fi
    done
    if [[ -e $LAB_DIR/state ]]; then
        # shellcheck disable=SC1091
        (source "$LAB_DIR/state"; die "a lab is already up (FRR $FRR, $NODES nodes); run lab.sh down first")
    fi
    if ip netns list | grep -qE '^rb-(router|node[0-9]+)\b'; then
        die "rb-* namespaces exist without lab state (a crashed run?); run lab.sh down first"
    fi
    check_frr "$frr"
    RIBBRIDGE=$(ribbridge_bin)
    FRR=$frr NODES=$nodes VIPS=("${vips[@]}") FRR_ROOT=$(frr_root_for "$frr") BMP=$bmp PROFILE=$profile GR=$gr
    mkdir -p "$LAB_DIR"
    # From here on a failure must not leave a half lab.
    trap 'rc=$?; if [[ $rc -ne 0 ]]; then log "up failed; tearing down"; cmd_down >/dev/null 2>&1 || true; fi' EXIT
    {
        echo "FRR=$FRR"
        echo "NODES=$NODES"
        echo "FRR_ROOT=$FRR_ROOT"
        printf 'VIPS=(%s)\n' "${VIPS[*]}"
        echo "BMP=$BMP"
        echo "PROFILE=$PROFILE"
        echo "GR=$GR"
    } >"$LAB_DIR/state.tmp"
    mv "$LAB_DIR/state.tmp" "$LAB_DIR/state"

    local ns
    for ns in $(namespaces); do
        ip netns add "$ns"
        ip -n "$ns" link set lo up
        # No duplicate address detection on the lab's links: a link-local
        # address held tentative ~1-2 s keeps bgpd's IPv6 sessions down for
        # as long (every lab up, every bgpd restart). A test that needs DAD
        # (a dadfailed VIP) turns it back on for its interface.
        ip netns exec "$ns" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1 \
            net.ipv6.conf.default.accept_dad=0
        mkdir -p "$LAB_DIR/$ns"
        # On 10.x the daemons see the root's /run/ribbridge-lab: point the
        # host-side directory at it so logs are found in one place.
        if [[ -n $FRR_ROOT ]]; then
            rmdir "$LAB_DIR/$ns"
            mkdir -p "$FRR_ROOT/run/ribbridge-lab/$ns"
            ln -s "$FRR_ROOT/run/ribbridge-lab/$ns" "$LAB_DIR/$ns"
        fi
    done
    for ((i = 1; i <= NODES; i++)); do
        ip link add "rb-n$i" netns "$ROUTER" type veth peer name eth0 netns "rb-node$i"
        ip -n "$ROUTER" addr add "198.18.$i.1/24" dev "rb-n$i"
        ip -n "$ROUTER" addr add "fdbb:0:0:$i::1/64" dev "rb-n$i" nodad
        ip -n "rb-node$i" addr add "198.18.$i.2/24" dev eth0
        ip -n "rb-node$i" addr add "fdbb:0:0:$i::2/64" dev eth0 nodad
        ip -n "$ROUTER" link set "rb-n$i" up
        ip -n "rb-node$i" link set eth0 up
    done
    router_conf >"$LAB_DIR/$ROUTER/frr.conf"
    lab_mapping >"$LAB_DIR/frr-peers.json"
    for ((i = 1; i <= NODES; i++)); do node_conf "$i" "$LAB_DIR/rb-node$i/frr.conf"; done
    for ns in $(namespaces); do start_frr "$ns"; done
    [[ $wait -eq 1 ]] && wait_established
    trap - EXIT
    log "lab up: FRR $FRR, $NODES nodes, VIPs ${VIPS[*]}${BMP:+, BMP to $BMP}, profile $PROFILE$( ((GR)) && echo ', graceful restart')"
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
    local root="" ns
    if [[ -f $LAB_DIR/state ]]; then
        # shellcheck disable=SC1091
        source "$LAB_DIR/state"
        root=$FRR_ROOT
    fi
    # The writers and backends first: their pid files are in $LAB_DIR.
    stop_all_procs
    # Every rb-router / rb-nodeN namespace is ours, with or without state
    # (a crashed run leaves namespaces and no state).
    for ns in $(ip netns list | awk '{print $1}' | grep -E '^rb-(router|node[0-9]+)$' || true); do
        kill_ns_procs "$ns"
        ip netns del "$ns"
        for r in "" "$CACHE"/frr-*; do unmount_node "$ns" "$r"; done
        rm -rf "/run/frr/$ns" "/etc/frr/$ns"
        for r in "$CACHE"/frr-*; do
            [[ -d $r/run ]] && rm -rf "$r/run/frr/$ns" "$r/run/ribbridge-lab/$ns" "$r/etc/frr/$ns"
        done
    done
    for r in ${root:-} "$CACHE"/frr-*; do
        if [[ -d $r/run/ribbridge-lab ]]; then rmdir "$r/run/ribbridge-lab" 2>/dev/null || true; fi
    done
    rm -rf "$LAB_DIR"
    # The netns fixture says how long its lab was up (CI's per-test cost).
    log "lab down${LAB_UP_SECS:+ (up ${LAB_UP_SECS} s)}"
}

cmd_status() {
    load_state
    echo "FRR $FRR, $NODES nodes, VIPs ${VIPS[*]}${BMP:+, BMP to $BMP}, profile $PROFILE"
    local ns
    for ns in $(namespaces); do
        printf '%-10s FRR %s (%s)  sockets %s  pids %s\n' "$ns" "$(frr_of "$ns")" "$(profile_of "$ns")" \
            "$(sockdir "$ns")" "$(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')"
    done
    local f pid st
    for f in "$WRITERS"/*/kube-vip-*.pid "$WRITERS"/*/backend.pid; do
        [[ -e $f ]] || continue
        ns=$(basename "$(dirname "$f")")
        if [[ $f == */backend.pid ]]; then
            st="backend $(cat "$(dirname "$f")/backend.state" 2>/dev/null)"
            pid=$(proc_pid "$f" lab-backend.py) || pid=gone
        else
            st="kube-vip $(basename "$f" .pid)"
            st=${st/kube-vip-/}
            pid=$(proc_pid "$f" lab-kube-vip.py) || pid=gone
        fi
        printf '%-10s %s  pid %s\n' "$ns" "$st" "$pid"
    done
}

# --- VIPs, the way kube-vip writes them -------------------------------------------

vip_args() { # NODE PREFIX -> sets NODE PREFIX FAM
    NODE=$1 PREFIX=$2
    [[ $NODE =~ ^rb-node[0-9]+$ ]] || NODE=rb-node${NODE#node}
    ip netns list | grep -qE "^$NODE\b" || die "no namespace $NODE (lab nodes are rb-node1..rb-node$NODES)"
    FAM=-4; is_v6 "$PREFIX" && FAM=-6
    return 0
}

cmd_vip() { # add|del|reassert NODE PREFIX [--with-address | --route-only]
    # The address as kube-vip writes it, unless --route-only or
    # LAB_VIP_ADDRESS=0 (the netns suites: their FRR-bug tests need the
    # bare route, docs/LAB-WRITER.md).
    local op=$1 addr=${LAB_VIP_ADDRESS:-1}; shift
    [[ $# -ge 2 ]] || usage_error "vip-$op" "vip-$op: NODE and PREFIX are required"
    [[ $# -le 2 || ($# -eq 3 && ($3 == --with-address || $3 == --route-only) && $op != reassert) ]] \
        || usage_error "vip-$op" "vip-$op: unexpected argument '$3'"
    load_state
    vip_args "$1" "$2"
    case ${3:-} in
        --with-address) addr=1 ;;
        --route-only) addr=0 ;;
    esac
    local route=(route "$PREFIX" dev lo table "$VIP_TABLE" proto "$VIP_PROTO" scope global)
    local addrargs=("$PREFIX" dev lo valid_lft forever preferred_lft 0)
    [[ $FAM == -6 ]] && addrargs+=(nodad)
    case $op in
        add)
            # kube-vip: AddIP first, then RouteAdd.
            [[ $addr -eq 1 ]] && ip -n "$NODE" "$FAM" addr add "${addrargs[@]}"
            ip -n "$NODE" "$FAM" route add "${route[@]:1}"
            ;;
        del)
            # kube-vip: RouteDel first, then DeleteIP.
            ip -n "$NODE" "$FAM" route del "${route[@]:1}"
            if [[ $addr -eq 1 && -n $(ip -n "$NODE" "$FAM" addr show dev lo to "$PREFIX") ]]; then
                ip -n "$NODE" "$FAM" addr del "$PREFIX" dev lo
            fi
            ;;
        reassert)
            # kube-vip >= 1.2.2 toggles the realm on every healthy tick so that
            # the replace is a real change the kernel announces.
            local cur realm=1
            cur=$(ip -n "$NODE" "$FAM" route show table "$VIP_TABLE" "$PREFIX" | grep -o 'realm [0-9]*' || true)
            [[ $cur == "realm 1" ]] && realm=2
            ip -n "$NODE" "$FAM" route replace "${route[@]:1}" realm "$realm"
            ;;
    esac
    return 0
}

# --- kube-vip and the router's health endpoints, as processes ---------------------

# Background processes in a node's namespace, on the host's filesystem (not
# in an FRR root): the lab writer (scripts/lab-kube-vip.py, one per node and
# VIP) and the backend (scripts/lab-backend.py, one per node). Their pid,
# log and state files are under $LAB_DIR/writers/NODE; `down` stops them.
WRITERS=$LAB_DIR/writers
PYTHON=/usr/bin/python3

# The file name part of a PREFIX: 192.0.2.10/32 -> 192.0.2.10_32,
# 2001:db8::10/128 -> 2001-db8--10_128.
prefix_key() { local k=${1//\//_}; echo "${k//:/-}"; }

# The pid in PIDFILE when that process is alive and runs SCRIPT; else fails.
proc_pid() { # PIDFILE SCRIPT
    local pid
    pid=$(cat "$1" 2>/dev/null) || return 1
    [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -F "$2" >/dev/null || return 1
    echo "$pid"
}

# Start CMD in NODE's namespace in the background, its output appended to
# LOG, its pid in PIDFILE; return once LOG has a new line matching READY
# (the process's own "I run" line), fail if it exits first.
proc_start() { # NODE PIDFILE LOG READY CMD...
    local node=$1 pidf=$2 logf=$3 ready=$4 pid before deadline
    shift 4
    mkdir -p "$(dirname "$pidf")"
    touch "$logf"
    before=$(wc -l <"$logf")
    # `ip netns exec` execs CMD: $! is CMD's pid. No descriptor of ours
    # stays open in it (the scripts close what they inherit, the lab lock
    # among them).
    ip netns exec "$node" "$@" </dev/null >>"$logf" 2>&1 &
    pid=$!
    echo "$pid" >"$pidf"
    deadline=$((SECONDS + 10))
    until tail -n "+$((before + 1))" "$logf" | grep "$ready" >/dev/null; do
        if ! kill -0 "$pid" 2>/dev/null; then
            rm -f "$pidf"
            die "$(basename "$pidf" .pid) of $node exited at start: $(tail -n "+$((before + 1))" "$logf" | tail -3)"
        fi
        ((SECONDS < deadline)) || die "$(basename "$pidf" .pid) of $node (pid $pid) not running after 10 s; see $logf"
        sleep 0.05
    done
}

# Send SIGNAL to the process of PIDFILE (running SCRIPT) and wait until it
# is gone (SIGKILL after 10 s); remove PIDFILE. Fails when it is not running.
proc_stop() { # PIDFILE SCRIPT SIGNAL
    local pid deadline
    pid=$(proc_pid "$1" "$2") || { rm -f "$1"; return 1; }
    kill -s "$3" "$pid" 2>/dev/null || true
    deadline=$((SECONDS + 10))
    while kill -0 "$pid" 2>/dev/null; do
        if ((SECONDS >= deadline)); then kill -s KILL "$pid" 2>/dev/null || true; fi
        sleep 0.05
    done
    rm -f "$1"
}

# Stop every writer and backend of the lab (SIGTERM: neither cleans up).
stop_all_procs() {
    local f
    for f in "$WRITERS"/*/kube-vip-*.pid; do
        [[ -e $f ]] && { proc_stop "$f" lab-kube-vip.py TERM || true; }
    done
    for f in "$WRITERS"/*/backend.pid; do
        [[ -e $f ]] && { proc_stop "$f" lab-backend.py TERM || true; }
    done
    return 0
}

cmd_kube_vip() { # NODE start|stop|kill PREFIX [OPTIONS]
    [[ $# -ge 3 ]] || usage_error kube-vip "kube-vip: NODE, start|stop|kill and PREFIX are required"
    local node op=$2 prefix=$3 key pidf logf pid
    case $op in start | stop | kill) ;; *) usage_error kube-vip "kube-vip: '$op' is not start, stop or kill" ;; esac
    [[ $prefix =~ ^[0-9.]+/32$ || $prefix =~ ^[0-9a-fA-F:]+/128$ ]] \
        || usage_error kube-vip "kube-vip: '$prefix' is not a VIP like 192.0.2.10/32 or 2001:db8::10/128"
    load_state
    node=$(node_ns "$1" kube-vip)
    shift 3
    key=$(prefix_key "$prefix")
    pidf=$WRITERS/$node/kube-vip-$key.pid logf=$WRITERS/$node/kube-vip-$key.log
    case $op in
        start)
            local args=("$prefix")
            while [[ $# -gt 0 ]]; do
                case $1 in
                    --health) args+=(--health "${2:?--health needs a URL}"); shift 2 ;;
                    --interval | --timeout)
                        [[ ${2:-} =~ ^[0-9]*\.?[0-9]+$ ]] || usage_error kube-vip "kube-vip: $1 needs seconds (like 5 or 0.5), got '${2:-}'"
                        args+=("$1" "$2"); shift 2 ;;
                    --clean-table) args+=(--clean-table); shift ;;
                    *) usage_error kube-vip "kube-vip: unknown argument '$1'" ;;
                esac
            done
            if pid=$(proc_pid "$pidf" lab-kube-vip.py); then
                die "kube-vip: $node already runs a writer for $prefix (pid $pid); stop or kill it first"
            fi
            proc_start "$node" "$pidf" "$logf" "lab-kube-vip\[[0-9]*\]: started" \
                "$PYTHON" "$REPO/scripts/lab-kube-vip.py" "${args[@]}" \
                --table "$VIP_TABLE" --proto "$VIP_PROTO" --dev lo
            log "kube-vip for $prefix runs in $node (pid $(cat "$pidf"), log $logf)"
            ;;
        stop | kill)
            [[ $# -eq 0 ]] || usage_error kube-vip "kube-vip: $op takes no option, got '$1'"
            local sig=TERM
            [[ $op == kill ]] && sig=KILL
            proc_stop "$pidf" lab-kube-vip.py "$sig" || die "kube-vip: $node runs no writer for $prefix"
            ;;
    esac
}

cmd_backend() { # NODE up|down|draining|slow
    [[ $# -eq 2 ]] || usage_error backend "backend: NODE and one of up, down, draining, slow are required"
    local node st=$2 dir pidf
    case $st in up | down | draining | slow) ;; *) usage_error backend "backend: '$st' is not up, down, draining or slow" ;; esac
    load_state
    node=$(node_ns "$1" backend)
    dir=$WRITERS/$node pidf=$WRITERS/$node/backend.pid
    mkdir -p "$dir"
    # The backend reads the file on every request: a rewrite is the change.
    echo "$st" >"$dir/backend.state.tmp"
    mv "$dir/backend.state.tmp" "$dir/backend.state"
    if [[ $st == down ]]; then
        proc_stop "$pidf" lab-backend.py TERM || true
    elif ! proc_pid "$pidf" lab-backend.py >/dev/null; then
        proc_start "$node" "$pidf" "$dir/backend.log" "lab-backend\[[0-9]*\]: listening" \
            "$PYTHON" "$REPO/scripts/lab-backend.py" --port 1936 --state-file "$dir/backend.state"
    fi
    log "backend of $node: $st"
}

# --- a node's FRR with another configuration ------------------------------------

# Restart NODE's zebra, bgpd (and mgmtd on 10.x) with FILE as their frr.conf
# (for configurations rendered by `ribbridge render`). Stops the daemons by
# their pid files, so nothing else running in the namespace is touched.
cmd_node_config() { # NODE FILE
    [[ $# -eq 2 ]] || usage_error node-config "node-config: NODE and FILE are required"
    load_state
    local node file=$2
    node=$(node_ns "$1" node-config)
    [[ -r $file ]] || die "node-config: cannot read $file"
    stop_frr "$node" node-config
    # Overwrite in place: the file keeps the mode the daemons can read (and
    # FILE may be that file itself: then it stays as it is).
    [[ $file -ef $LAB_DIR/$node/frr.conf ]] || cat "$file" >"$LAB_DIR/$node/frr.conf"
    start_frr "$node"
    log "$node restarted with $file"
}

# The namespace of a NODE argument (rb-node<i>, node<i> or <i>).
node_ns() { # NODE CMD
    local node=$1
    [[ $node =~ ^rb-node[0-9]+$ ]] || node=rb-node${node#node}
    ip netns list | grep -qE "^$node\b" || die "$2: no namespace $node (lab nodes are rb-node1..rb-node$NODES)"
    echo "$node"
}

# Stop NODE's FRR daemons (SIGTERM, as a pod's termination does) by their
# pid files, so nothing else running in the namespace is touched; wait
# until they are gone.
stop_frr() { # NODE CMD
    local node=$1 d pid pids=() deadline
    for d in bgpd zebra mgmtd; do
        pid=$(cat "$(sockdir "$node")/$d.pid" 2>/dev/null) || continue
        kill "$pid" 2>/dev/null && pids+=("$pid")
    done
    deadline=$((SECONDS + 10))
    for pid in "${pids[@]}"; do
        while kill -0 "$pid" 2>/dev/null; do
            ((SECONDS < deadline)) || die "$2: FRR daemon $pid in $node did not stop within 10s"
            sleep 0.05
        done
    done
}

# Record KEY=VALUE in the lab's state, replacing an earlier value.
set_state() { # KEY VALUE
    { grep -v "^$1=" "$LAB_DIR/state" || true; echo "$1=$2"; } >"$LAB_DIR/state.tmp"
    mv "$LAB_DIR/state.tmp" "$LAB_DIR/state"
}

# Undo `switch`'s bind mounts of NODE's directories in the root it runs
# from (none when that is the lab's own root).
unmount_node() { # NODE ROOT
    local m
    for m in "$2/run/frr/$1" "$2/run/ribbridge-lab/$1"; do
        if mountpoint -q "$m"; then umount "$m"; fi
    done
}

# Replace NODE's FRR in place with another release and/or profile, the socket
# and log directories kept (see usage).
cmd_switch() { # NODE [--frr VERSION] [--profile NAME]
    [[ $# -ge 1 ]] || usage_error switch "switch: NODE is required"
    load_state
    local node key old_root new_root frr profile i p
    node=$(node_ns "$1" switch); shift
    frr=$(frr_of "$node") profile=$(profile_of "$node")
    while [[ $# -gt 0 ]]; do
        case $1 in
            --frr) frr=${2:?--frr needs a version}; shift 2 ;;
            --profile) profile=${2:?--profile needs a name}; shift 2 ;;
            *) usage_error switch "switch: unknown argument '$1'" ;;
        esac
    done
    [[ " $PROFILES " == *" $profile "* ]] || usage_error switch "switch: --profile must be one of: $PROFILES (got '$profile')"
    check_frr "$frr"
    RIBBRIDGE=$(ribbridge_bin)
    if [[ $frr == 8.4 ]]; then
        for p in "${VIPS[@]}"; do
            is_v6 "$p" && die "switch: FRR 8.4 cannot import an IPv6 table, and the lab has VIP $p"
        done
    fi
    key=${node//-/_} old_root=$(root_of "$node") new_root=$(frr_root_for "$frr")
    stop_frr "$node" switch
    [[ $old_root == "${FRR_ROOT:-}" ]] || unmount_node "$node" "$old_root"
    if [[ $new_root != "${FRR_ROOT:-}" ]]; then
        # The lab's directories of the node, seen at the same path inside
        # the new release's root. On the host (8.4) /run/ribbridge-lab/NODE
        # is already the lab's link to them.
        mkdir -p "$new_root/run/frr/$node"
        mount --bind "$(sockdir "$node")" "$new_root/run/frr/$node"
        if [[ -n $new_root ]]; then
            mkdir -p "$new_root/run/ribbridge-lab/$node"
            mount --bind "$(realpath "$LAB_DIR/$node")" "$new_root/run/ribbridge-lab/$node"
        fi
    fi
    set_state "NODE_FRR_$key" "$frr"
    set_state "NODE_PROFILE_$key" "$profile"
    load_state
    # The new root's frr user may have another uid than the old one's.
    in_ns "$node" chown -R frr:frr "/run/frr/$node" "/run/ribbridge-lab/$node"
    i=${node#rb-node}
    node_conf "$i" "$LAB_DIR/$node/frr.conf"
    start_frr "$node"
    wait_established
    log "$node switched to FRR $frr, profile $profile (sockets still in $(sockdir "$node"))"
}

# --- a node's FRR reloaded, the way frr-k8s does it ------------------------------

# Apply FILE to NODE's running daemons with FRR's frr-reload.py exactly as
# frr-k8s's reloader (cmd/reloader/frr-reloader.sh) runs it: `--test
# --stdout FILE` first (a failure there aborts), then `--reload --overwrite
# --stdout FILE`; plus the options that point its vtysh at NODE's daemons,
# the ones `lab.sh vtysh` uses: pathspace NODE (`vtysh -N NODE`), the vty
# sockets in /run/frr/NODE (--vty_socket /run/frr: vtysh appends NODE),
# vtysh in /usr/bin, vtysh.conf in /etc/frr/NODE (--confdir /etc/frr;
# --overwrite's `write` goes to /etc/frr/NODE/frr.conf), its scratch files
# in /run/frr/NODE. On 10.x all of it runs inside the FRR root, FILE copied
# to where the root sees it. On the default profile frr-reload.py also acts
# on the lab's artefacts (the machine's hostname, datacenter defaults:
# docs/FRR-BEHAVIOUR.md, "Reloads"); the frr-k8s profile has none.
redact() { sed 's/password.*/password <retracted>/g'; }

cmd_reload() { # NODE [FILE]
    [[ $# -ge 1 && $# -le 2 ]] || usage_error reload "reload: NODE is required, then at most a FILE"
    load_state
    local node=$1 file=${2:-} inner out rc
    [[ $node =~ ^rb-node[0-9]+$ ]] || node=rb-node${node#node}
    ip netns list | grep -qE "^$node\b" || die "reload: no namespace $node (lab nodes are rb-node1..rb-node$NODES)"
    [[ -n $file ]] || file=$LAB_DIR/$node/frr.conf
    [[ -r $file && -s $file ]] || die "reload: cannot read $file (or it is empty)"
    local py=/usr/lib/frr/frr-reload.py root release
    root=$(root_of "$node") release=$(frr_of "$node")
    [[ -f $root$py ]] \
        || die "reload: FRR $release has no frr-reload.py ($root$py); run: scripts/install-frr.sh $release (it installs frr-pythontools)"
    inner=/run/ribbridge-lab/$node/reload.conf
    [[ $file -ef $LAB_DIR/$node/reload.conf ]] || cat "$file" >"$LAB_DIR/$node/reload.conf"
    # vtysh appends the pathspace to --vty_socket and --confdir.
    local opts=(--pathspace "$node" --vty_socket /run/frr --bindir /usr/bin
        --confdir /etc/frr --rundir "/run/frr/$node")
    # --overwrite ends in vtysh's `write`. Without an integrated config
    # (`service integrated-vtysh-config` in vtysh.conf, or an existing
    # /etc/frr/NODE/frr.conf) vtysh asks every daemon to write its own -f
    # file, and the lab's daemons share one: each would overwrite the lab's
    # frr.conf with its own part. frr-k8s's vtysh.conf names the integrated
    # config; so does this node's from here on (the frr-k8s profile starts
    # with it).
    local vc=$root/etc/frr/$node/vtysh.conf
    grep -qx 'service integrated-vtysh-config' "$vc" 2>/dev/null \
        || echo "service integrated-vtysh-config" >>"$vc"
    local logf=$LAB_DIR/$node/frr-reload.log
    echo "=== $(date -u +%FT%T.%3NZ) lab.sh reload $node $file" >>"$logf"
    rc=0
    out=$(in_ns "$node" /usr/bin/python3 "$py" "${opts[@]}" --test --stdout "$inner" 2>&1 | redact) || rc=$?
    printf '%s\n' "--- frr-reload.py --test (exit $rc)" "$out" | tee -a "$logf"
    [[ $rc -eq 0 ]] || die "reload: frr-reload.py --test rejected $file for $node (exit $rc; output above, also in $logf); nothing was applied"
    rc=0
    out=$(in_ns "$node" /usr/bin/python3 "$py" "${opts[@]}" --reload --overwrite --stdout "$inner" 2>&1 | redact) || rc=$?
    printf '%s\n' "--- frr-reload.py --reload --overwrite (exit $rc)" "$out" | tee -a "$logf"
    [[ $rc -eq 0 ]] || die "reload: frr-reload.py --reload --overwrite failed for $node with $file (exit $rc; output above, also in $logf): part of it may be applied"
    log "$node reloaded with $file"
}

# --- faults: kill and start one FRR daemon -----------------------------------------

# The namespace a NODE argument names: rb-router, rb-nodeN, or nodeN / N.
fault_ns() { # NODE CMD
    local ns=$1
    [[ $ns =~ ^rb-(router|node[0-9]+)$ ]] || ns=rb-node${ns#node}
    ip netns list | grep -qE "^$ns\b" || die "$2: no namespace $ns"
    echo "$ns"
}

fault_daemon() { # DAEMON CMD
    case $1 in
        zebra | bgpd | mgmtd) ;;
        *) usage_error "$2" "$2: '$1' is not zebra, bgpd or mgmtd" ;;
    esac
}

# Send SIGNAL (default KILL: a crash) to DAEMON of NAMESPACE by its pid file;
# for KILL and TERM, wait until it is gone.
cmd_kill() { # NAMESPACE DAEMON [SIGNAL]
    [[ $# -ge 2 && $# -le 3 ]] || usage_error kill "kill: NAMESPACE and DAEMON are required, then at most a SIGNAL"
    fault_daemon "$2" kill
    load_state
    local ns d=$2 sig=${3:-KILL} pid deadline
    ns=$(fault_ns "$1" kill)
    pid=$(cat "$(sockdir "$ns")/$d.pid" 2>/dev/null) || die "kill: no pid file for $d in $ns (is it running?)"
    kill -s "${sig#SIG}" "$pid" 2>/dev/null || die "kill: $d (pid $pid) of $ns is not running"
    case ${sig#SIG} in
        KILL | TERM | 9 | 15)
            deadline=$((SECONDS + 5))
            while kill -0 "$pid" 2>/dev/null; do
                ((SECONDS < deadline)) || die "kill: $d (pid $pid) of $ns survived SIG${sig#SIG} for 5 s"
                sleep 0.05
            done
            ;;
    esac
}

# Start DAEMON of NAMESPACE again with the lab's configuration.
cmd_start() { # NAMESPACE DAEMON
    [[ $# -eq 2 ]] || usage_error start "start: NAMESPACE and DAEMON are required"
    fault_daemon "$2" start
    load_state
    local ns d=$2
    ns=$(fault_ns "$1" start)
    run_daemon "$ns" "$d"
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
        cmd_status ;;
    sockdir)
        [[ $# -eq 1 ]] || usage_error sockdir "sockdir: one NAMESPACE"
        load_state; sockdir "$1" ;;
    exec)
        [[ $# -ge 2 ]] || usage_error exec "exec: NAMESPACE and CMD are required"
        need_root; load_state; in_ns "$@" ;;
    vtysh)
        [[ $# -ge 2 ]] || usage_error vtysh "vtysh: NAMESPACE and COMMAND are required"
        need_root; load_state
        ns=$1; shift
        args=(); for c in "$@"; do args+=(-c "$c"); done
        in_ns "$ns" vtysh -N "$ns" "${args[@]}" ;;
    vip-add) need_root; cmd_vip add "$@" ;;
    vip-del) need_root; cmd_vip del "$@" ;;
    vip-reassert) need_root; cmd_vip reassert "$@" ;;
    kube-vip) need_root; cmd_kube_vip "$@" ;;
    backend) need_root; cmd_backend "$@" ;;
    node-config) need_root; cmd_node_config "$@" ;;
    switch) need_root; cmd_switch "$@" ;;
    reload) need_root; cmd_reload "$@" ;;
    kill) need_root; cmd_kill "$@" ;;
    start) need_root; cmd_start "$@" ;;
    *) usage_error "" "unknown command '$sub'" ;;
esac
