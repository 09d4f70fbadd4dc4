#!/usr/bin/env bash
# Check deploy/systemd/ribbridge.service, as root:
#   1. `systemd-analyze verify` accepts it, alone and with the repair.conf
#      drop-in, and ribbridge-drain.service (exposure at most MAX_EXPOSURE);
#   2. `systemd-analyze security --offline=true` rates its exposure at most
#      MAX_EXPOSURE (2.5): observe (as installed) and repair (with the
#      drop-in); the figures are printed (docs/DEPLOY.md quotes them);
#   3. unless --no-boot: boots the FRR 10.7 root ($CACHE/frr-10.7, made by
#      scripts/install-frr.sh) with systemd-nspawn (a throwaway overlay over
#      the root, its own network namespace), starts the unit there beside
#      FRR's frr.service, and checks that it runs as frr with frrvty, with
#      CAP_NET_ADMIN only (repair) or no capability (observe), under the
#      unit's seccomp filter, and that `ribbridge status` answers with the
#      VIP it put in table 198, seen in the kernel and in zebra, and that
#      /run/ribbridge (the drain's intent) is frr's and outlives the unit;
#      then that ribbridge-drain.service, stopped, drains bgpd and records
#      the intent there.
# Usage: scripts/check-systemd-unit.sh [--no-boot] [--bin PATH]
#   --bin: the ribbridge to install in the container (default: the static
#   release binary scripts/build-image.sh builds).
# The host's PID 1 need not be systemd; nspawn needs SYSTEMD_NSPAWN_UNIFIED_
# HIERARCHY=1 on hybrid-cgroup hosts (the root's systemd refuses cgroup v1)
# and --keep-unit --register=no where there is no host systemd to ask.
set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "check-systemd-unit: $*" >&2; exit 1; }
log() { echo "check-systemd-unit: $*" >&2; }

MAX_EXPOSURE=2.5
CACHE=${RIBBRIDGE_CACHE:-/var/cache/ribbridge}
ROOT=$CACHE/frr-10.7
boot=1
bin=target/x86_64-unknown-linux-gnu/release/ribbridge
while [[ $# -gt 0 ]]; do
    case $1 in
        --no-boot) boot=0; shift ;;
        --bin) [[ $# -ge 2 ]] || die "--bin needs a PATH"; bin=$2; shift 2 ;;
        *) die "unknown argument '$1' (usage: $0 [--no-boot] [--bin PATH])" ;;
    esac
done
[[ -x $bin ]] || die "$bin is missing: run scripts/build-image.sh first, or give --bin"
bin=$(realpath "$bin")

work=$(mktemp -d)
nspawn_pid=
init=
# The container, if still up: powered off from inside, else nspawn is asked
# (SIGTERM), else killed; never waited on without a bound.
stop_container() {
    [[ -n $nspawn_pid ]] || return 0
    if [[ -n $init ]]; then
        nsenter -t "$init" -a systemctl poweroff >/dev/null 2>&1 || true
    fi
    for sig in TERM KILL; do
        for _ in $(seq 1 100); do
            kill -0 "$nspawn_pid" 2>/dev/null || break 2
            sleep 0.1
        done
        kill "-$sig" "$nspawn_pid" 2>/dev/null || true
    done
    wait "$nspawn_pid" 2>/dev/null || true
    nspawn_pid=
}
cleanup() {
    stop_container
    rm -rf "$work"
}
trap cleanup EXIT

# 1. verify: the unit as shipped, its binary path pointed at a real one.
mkdir -p "$work/verify/ribbridge.service.d"
sed "s#/usr/local/bin/ribbridge#$bin#g" deploy/systemd/ribbridge.service >"$work/verify/ribbridge.service"
systemd-analyze verify --man=no "$work/verify/ribbridge.service" \
    || die "systemd-analyze verify refused deploy/systemd/ribbridge.service"
sed "s#/usr/local/bin/ribbridge#$bin#g" deploy/systemd/repair.conf >"$work/verify/ribbridge.service.d/repair.conf"
systemd-analyze verify --man=no "$work/verify/ribbridge.service" \
    || die "systemd-analyze verify refused ribbridge.service with repair.conf"
log "systemd-analyze verify: ok (observe, and repair with its drop-in)"
sed "s#/usr/local/bin/ribbridge#$bin#g" deploy/systemd/ribbridge-drain.service >"$work/verify/ribbridge-drain.service"
systemd-analyze verify --man=no "$work/verify/ribbridge-drain.service" \
    || die "systemd-analyze verify refused deploy/systemd/ribbridge-drain.service"
drain_exposure=$(systemd-analyze security --offline=true "$work/verify/ribbridge-drain.service" | awk '/Overall exposure level/ {print $(NF-2)}')
awk -v e="$drain_exposure" -v m="$MAX_EXPOSURE" 'BEGIN { exit !(e <= m) }' \
    || die "ribbridge-drain.service: exposure $drain_exposure above $MAX_EXPOSURE"
log "systemd-analyze verify: ok (ribbridge-drain.service, exposure $drain_exposure)"

# 2. exposure, as shipped (observe) and with the repair drop-in.
exposure() {
    local out figure
    out=$(systemd-analyze security --offline=true "$1/ribbridge.service" 2>&1) \
        || die "systemd-analyze security failed: $out"
    figure=$(sed -n 's/.*Overall exposure level for ribbridge.service: \([0-9.]*\).*/\1/p' <<<"$out")
    [[ -n $figure ]] || die "no exposure figure in: $out"
    echo "$figure"
}
mkdir -p "$work/observe"
cp deploy/systemd/ribbridge.service "$work/observe/"
mkdir -p "$work/repair/ribbridge.service.d"
cp deploy/systemd/ribbridge.service "$work/repair/"
cp deploy/systemd/repair.conf "$work/repair/ribbridge.service.d/"
repair=$(exposure "$work/repair")
observe=$(exposure "$work/observe")
log "exposure (systemd-analyze security --offline=true): observe $observe, repair $repair (at most $MAX_EXPOSURE)"
for f in "$repair" "$observe"; do
    awk -v f="$f" -v m="$MAX_EXPOSURE" 'BEGIN { exit !(f <= m) }' \
        || die "exposure $f is above $MAX_EXPOSURE: see systemd-analyze security --offline=true deploy/systemd/ribbridge.service"
done

[[ $boot -eq 1 ]] || exit 0

# 3. boot the FRR 10.7 root, the unit beside frr.service.
command -v systemd-nspawn >/dev/null || die "systemd-nspawn is missing: run scripts/install-deps.sh"
[[ -x $ROOT/usr/lib/systemd/systemd ]] || die "$ROOT has no systemd: run scripts/install-frr.sh"
[[ -e $ROOT/usr/lib/systemd/system/frr.service ]] || die "$ROOT has no frr.service: run scripts/install-frr.sh"
sed 's/^bgpd=no/bgpd=yes/' "$ROOT/etc/frr/daemons" >"$work/daemons"
SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1 systemd-nspawn -D "$ROOT" --volatile=overlay \
    --private-network --register=no --keep-unit -M "rb-unit-$$" \
    --bind-ro="$bin:/usr/local/bin/ribbridge" \
    --bind-ro="$PWD/deploy/systemd/ribbridge.service:/etc/systemd/system/ribbridge.service" \
    --bind-ro="$PWD/deploy/systemd/ribbridge-drain.service:/etc/systemd/system/ribbridge-drain.service" \
    --bind-ro="$PWD/deploy/ribbridge.toml:/etc/ribbridge/ribbridge.toml" \
    --bind-ro="$work/daemons:/etc/frr/daemons" \
    -b </dev/null >"$work/console.log" 2>&1 &
nspawn_pid=$!
for _ in $(seq 1 100); do
    init=$(pgrep -P "$nspawn_pid" -x systemd || true)
    [[ -n $init ]] && break
    kill -0 "$nspawn_pid" 2>/dev/null || break
    sleep 0.1
done
[[ -n $init ]] || die "systemd-nspawn did not boot $ROOT:$(echo; tail -n 20 "$work/console.log")"
inside() { nsenter -t "$init" -a "$@"; }
# Until its systemd answers (its bus comes up a moment after it starts).
state=
for _ in $(seq 1 120); do
    state=$(timeout 60 nsenter -t "$init" -a systemctl is-system-running --wait 2>/dev/null || true)
    [[ $state == running || $state == degraded ]] && break
    sleep 0.5
done
[[ $state == running || $state == degraded ]] \
    || die "the container did not finish booting (state '$state'):$(echo; tail -n 20 "$work/console.log")"
inside systemctl is-active --quiet frr.service || die "frr.service is not active in the container"
inside vtysh -c 'conf t' -c 'router bgp 64512' -c 'bgp router-id 192.0.2.1' \
    -c 'address-family ipv4 unicast' -c 'redistribute table-direct 198' -c end >/dev/null
inside ip link set lo up
# zebra answers ROUTER_ID_ADD, which ribbridge uses as the end of its ZAPI
# dump, only once it has a router id: a container with nothing but
# 127.0.0.1 has none, and ribbridge would stay (rightly) not ready.
inside ip addr add 198.51.100.1/32 dev lo
inside ip route add 192.0.2.10/32 dev lo table 198 proto 248 scope global

# The unit, as shipped (observe) then with the repair drop-in.
check_run() {
    local mode=$1 cap=$2 pid status
    inside systemctl restart ribbridge.service
    for _ in $(seq 1 50); do
        status=$(inside /usr/local/bin/ribbridge status --endpoint 127.0.0.1:7585 2>&1 || true)
        grep -Eq '^192\.0\.2\.10/32 +198 +[a-z_]+ +yes +yes ' <<<"$status" && break
        sleep 0.2
    done
    if ! grep -Eq "mode $mode" <<<"$status" || ! grep -Eq '^192\.0\.2\.10/32 +198 +[a-z_]+ +yes +yes ' <<<"$status"; then
        die "ribbridge.service ($mode): status does not show the VIP in kernel and zebra:$(echo; echo "$status"; inside journalctl -u ribbridge --no-pager -n 20)"
    fi
    pid=$(pgrep -f '^/usr/local/bin/ribbridge run --config /etc/ribbridge/ribbridge.toml' | head -n1)
    local frr frrvty
    frr=$(awk -F: '$1 == "frr" { print $3 }' "$ROOT/etc/passwd")
    frrvty=$(awk -F: '$1 == "frrvty" { print $3 }' "$ROOT/etc/group")
    grep -Eq "^Uid:\s+$frr\s" "/proc/$pid/status" || die "$mode: not running as frr ($frr)"
    grep -Eq "^Groups:.*\b$frrvty\b" "/proc/$pid/status" || die "$mode: not in frrvty ($frrvty)"
    # What ribbridge holds once started: its own narrowing empties the
    # ambient set systemd filled; the inheritable one stays as systemd set
    # it (the unit's seccomp filter refuses capset, and without an ambient
    # set it passes nothing on).
    local set want
    for set in CapPrm:$cap CapEff:$cap CapBnd:$cap CapInh:$cap CapAmb:0000000000000000; do
        want=${set#*:}
        grep -Eq "^${set%%:*}:\s+$want$" "/proc/$pid/status" \
            || die "$mode: ${set%%:*} is not $want: $(grep -E '^Cap' "/proc/$pid/status" | tr '\n' ' ')"
    done
    grep -Eq '^NoNewPrivs:\s+1$' "/proc/$pid/status" || die "$mode: NoNewPrivs is not set"
    grep -Eq '^Seccomp:\s+2$' "/proc/$pid/status" || die "$mode: no seccomp filter"
    tr '\0' '\n' <"/proc/$pid/environ" | grep -qx 'MALLOC_ARENA_MAX=1' \
        || die "$mode: the unit's MALLOC_ARENA_MAX=1 (one malloc arena) is not in the daemon's environment"
    log "booted $(basename "$ROOT") with nspawn: ribbridge.service ($mode) beside frr.service: uid $frr, frrvty, CapPrm=CapEff=CapBnd=CapInh $cap, CapAmb 0, NoNewPrivs 1, seccomp on; status:"
    log "  $(grep -E '^(Uid|Gid|Groups|Cap[A-Za-z]+|NoNewPrivs):' "/proc/$pid/status" | tr -s '\t\n' '  ')"
    while IFS= read -r l; do echo "    $l"; done <<<"$status" >&2
}
check_run observe 0000000000000000
# Type=notify: the restart above returned once ribbridge said READY=1. The
# watchdog: the unit as shipped asks for it (30 s); with a 2 s period (a
# drop-in, so as not to wait 30 s) the pings must move systemd's watchdog
# timestamp while the service stays up, unrestarted.
wd=$(inside systemctl show -p WatchdogUSec --value ribbridge.service)
[[ $wd == 30s ]] || die "ribbridge.service: WatchdogUSec is '$wd', expected 30s"
inside mkdir -p /etc/systemd/system/ribbridge.service.d
printf '[Service]\nWatchdogSec=2s\n' | inside sh -c 'cat > /etc/systemd/system/ribbridge.service.d/watchdog-check.conf'
inside systemctl daemon-reload
inside systemctl restart ribbridge.service
first=$(inside systemctl show -p WatchdogTimestampMonotonic --value ribbridge.service)
pinged=0
for _ in $(seq 1 50); do
    now=$(inside systemctl show -p WatchdogTimestampMonotonic --value ribbridge.service)
    if [[ $now != "$first" ]]; then pinged=1; break; fi
    sleep 0.2
done
(( pinged )) || die "ribbridge.service: no watchdog ping within 10 s (WatchdogSec=2s):$(echo; inside journalctl -u ribbridge --no-pager -n 20)"
[[ $(inside systemctl show -p NRestarts --value ribbridge.service) == 0 ]] \
    || die "ribbridge.service restarted under the 2 s watchdog:$(echo; inside journalctl -u ribbridge --no-pager -n 20)"
log "ribbridge.service: Type=notify ready, WatchdogSec=30s as shipped; with 2 s the pings move the watchdog timestamp ($first -> $now), no restart"
inside rm /etc/systemd/system/ribbridge.service.d/watchdog-check.conf
# The drain's intent directory: made by the unit for frr, kept when it stops.
rundir_ok() {
    local got
    got=$(inside stat -c '%U %a' /run/ribbridge 2>&1 || true)
    [[ $got == "frr 755" ]] || die "/run/ribbridge $1: '$got', expected 'frr 755' (RuntimeDirectory=ribbridge)"
}
rundir_ok "while ribbridge.service runs"
inside mkdir -p /etc/systemd/system/ribbridge.service.d
inside sh -c 'cat > /etc/systemd/system/ribbridge.service.d/repair.conf' <deploy/systemd/repair.conf
inside systemctl daemon-reload
check_run repair 0000000000001000
# The drain unit, stopped, drains under its own sandbox and records the
# intent in the directory ribbridge.service shares.
inside vtysh -c 'conf t' -c 'route-map RB-VIP permit 10' -c exit -c 'router bgp 64512' \
    -c 'address-family ipv4 unicast' -c 'no redistribute table-direct 198' \
    -c 'redistribute table-direct 198 route-map RB-VIP' -c end >/dev/null
inside systemctl start ribbridge-drain.service
inside systemctl stop ribbridge-drain.service
intent=$(inside cat /run/ribbridge/drain 2>&1 || true)
grep -q '"drained":true' <<<"$intent" \
    || die "ribbridge-drain.service recorded no intent ('$intent'):$(echo; inside journalctl -u ribbridge-drain --no-pager -n 20)"
inside vtysh -c 'show running-config' | grep -q 'description ribbridge-drain' \
    || die "ribbridge-drain.service did not drain bgpd:$(echo; inside journalctl -u ribbridge-drain --no-pager -n 20)"
log "ribbridge-drain.service stopped: bgpd drained, intent $intent"
inside systemctl stop ribbridge.service
result=$(inside systemctl show -p Result --value ribbridge.service)
[[ $result == success ]] || die "ribbridge.service stopped with result '$result'"
rundir_ok "once ribbridge.service stopped (RuntimeDirectoryPreserve=yes)"
log "/run/ribbridge: frr's, 0755, kept when the unit stops"
stop_container
log "the unit stopped cleanly; container powered off"
