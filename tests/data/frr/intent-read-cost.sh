#!/usr/bin/env bash
# The idle cost of keeping the intent current (docs/PERFORMANCE.md, "Reading
# bgpd's configuration"): bgpd's CPU over a window without ribbridge, then
# ribbridge's and bgpd's CPU over the same window with ribbridge running
# (observe mode, no heartbeat, nothing changing), with the frr-k8s profile's
# 2 neighbours and then with 64 (62 never up). One release per run:
#
#   tests/data/frr/intent-read-cost.sh 8.4|10.3|10.7 [WINDOW_S]
#
# Builds its own lab (`lab.sh up --profile frr-k8s`) and takes it down.
# Needs RIBBRIDGE_BIN (or a built ribbridge). Root.
set -Eeuo pipefail

REL=${1:?usage: intent-read-cost.sh 8.4|10.3|10.7 [WINDOW_S]}
WIN=${2:-60}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
LAB=$REPO/scripts/lab.sh
BIN=${RIBBRIDGE_BIN:-$REPO/target/debug/ribbridge}
case $REL in
    8.4) ROOT="" RELEASE=8.4 ;;
    10.3) ROOT=${RIBBRIDGE_CACHE:-/var/cache/ribbridge}/frr-10.3 RELEASE=10 ;;
    10.7) ROOT=${RIBBRIDGE_CACHE:-/var/cache/ribbridge}/frr-10.7 RELEASE=10 ;;
    *) echo "intent-read-cost: unknown release $REL" >&2; exit 2 ;;
esac
HZ=$(getconf CLK_TCK)
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
pct() { python3 -c "print(f'{($2 - $1) / $HZ / $WIN * 100:.3f}')"; }
bgpd() { cat "$ROOT/run/frr/rb-node1/bgpd.pid"; }
tmp=$(mktemp -d)
trap '[[ -n ${rb:-} ]] && kill "$rb" 2>/dev/null; "$LAB" down >/dev/null 2>&1; rm -rf "$tmp"' EXIT

measure() { # LABEL
    local b0 b1 r0 r1
    b0=$(ticks "$(bgpd)"); sleep "$WIN"; b1=$(ticks "$(bgpd)")
    echo "$REL $1: bgpd without ribbridge $(pct "$b0" "$b1") % of a core over $WIN s"
    ip netns exec rb-node1 "$BIN" run --frr-dir "$("$LAB" sockdir rb-node1)" --mode observe \
        --listen 127.0.0.1:7599 >"$tmp/rb.log" 2>&1 &
    rb=$!
    for _ in $(seq 100); do
        grep -q 'ready=true' "$tmp/rb.log" && break
        sleep 0.2
    done
    grep -q 'ready=true' "$tmp/rb.log" || { echo "intent-read-cost: ribbridge never ready" >&2; cat "$tmp/rb.log" >&2; exit 1; }
    sleep 3
    b0=$(ticks "$(bgpd)"); r0=$(ticks "$rb"); sleep "$WIN"; b1=$(ticks "$(bgpd)"); r1=$(ticks "$rb")
    echo "$REL $1: with ribbridge: ribbridge $(pct "$r0" "$r1") %, bgpd $(pct "$b0" "$b1") % of a core over $WIN s"
    kill "$rb"; wait "$rb" 2>/dev/null || true; rb=
}

RIBBRIDGE_BIN=$BIN "$LAB" up --frr "$REL" --profile frr-k8s >/dev/null
measure "2 neighbours"
python3 "$HERE/reload_measure.py" peers64 /run/ribbridge-lab/frr-peers.json "$tmp/peers-64.json"
"$BIN" render --peers "$tmp/peers-64.json" --template "$REPO/scripts/lab-node-frrk8s.conf.j2" \
    --hostname rb-node1 --router-id 198.18.1.2 --frr-release "$RELEASE" --out "$tmp/node1-64.conf" 2>/dev/null
"$LAB" node-config node1 "$tmp/node1-64.conf" >/dev/null 2>&1
sleep 5
measure "64 neighbours"
