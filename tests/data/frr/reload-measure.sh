#!/usr/bin/env bash
# The frr-k8s profile's captures and the reload measurements of
# docs/FRR-BEHAVIOUR.md ("Reloads (frr-reload.py)") and docs/PERFORMANCE.md
# ("Reading bgpd's configuration") for one release; see README.md here.
#
#   flock /run/ribbridge-lab.lock tests/data/frr/reload-measure.sh 8.4|10.3|10.7 OUTDIR
#
# Builds its own lab (`lab.sh up --profile frr-k8s`, 2 nodes), writes the
# captures into tests/data/frr/frr-<release>/ and every raw result into
# OUTDIR, and takes the lab down at the end. Needs RIBBRIDGE_BIN (or a built
# ribbridge) for the lab's rendering. Run it under the lab lock.
set -Eeuo pipefail

REL=${1:?usage: reload-measure.sh 8.4|10.3|10.7 OUTDIR}
OUT=${2:?usage: reload-measure.sh 8.4|10.3|10.7 OUTDIR}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
LAB=$REPO/scripts/lab.sh
PY=$HERE/reload_measure.py
VIP=192.0.2.10
VIP6=2001:db8::10
REPS=${RELOAD_REPS:-20}
READS=${VTY_READS:-200}
case $REL in
    8.4) DIR=frr-8.4.4 ROOT="" RELEASE=8.4 ;;
    10.3) DIR=frr-10.3 ROOT=${RIBBRIDGE_CACHE:-/var/cache/ribbridge}/frr-10.3 RELEASE=10 ;;
    10.7) DIR=frr-10.7.1 ROOT=${RIBBRIDGE_CACHE:-/var/cache/ribbridge}/frr-10.7 RELEASE=10 ;;
    *) echo "reload-measure: unknown release $REL" >&2; exit 2 ;;
esac
CAP=$HERE/$DIR
N1=$ROOT/run/frr/rb-node1/bgpd.vty
RT=$ROOT/run/frr/rb-router/bgpd.vty
LABF=/run/ribbridge-lab
mkdir -p "$OUT"

log() { echo "reload-measure $REL: $*" >&2; }
res() { echo "$*" | tee -a "$OUT/results.txt"; }
bgpd_pid() { cat "$ROOT/run/frr/rb-node1/bgpd.pid"; }
show() { python3 "$PY" show "$N1" "$1"; }

# The router's path count sampled in the background while "$@" runs; prints
# the lowest count seen and the changes.
SAMPLER=""
sample_start() { : >"$OUT/$1.samples"; python3 "$PY" sample "$OUT/$1.samples" "$VIP/32" & SAMPLER=$!; sleep 0.3; }
sample_stop() { kill "$SAMPLER"; wait "$SAMPLER" || true; SAMPLER=""; }
min_paths() { awk 'NR == 1 || $2 < m { m = $2 } END { print m }' "$OUT/$1.samples"; }

# One `lab.sh reload node1 FILE`: its output kept, its wall time printed.
reload() { # NAME FILE
    local t0 t1
    t0=$(date +%s.%N)
    "$LAB" reload node1 "$2" >"$OUT/$1.reload" 2>&1 || { cat "$OUT/$1.reload" >&2; return 1; }
    t1=$(date +%s.%N)
    echo "$t1 - $t0" | bc
}
# What frr-reload.py sent: its "Executed" (deletes) and the content of the
# files it gave vtysh (adds), per pass.
sent() { grep -E 'Executed|content|^ ?\[?'"'" "$OUT/$1.reload" | sed 's/^[0-9-]* [0-9:,]*  INFO: //' || true; }

trap '[[ -n $SAMPLER ]] && kill "$SAMPLER"; "$LAB" down >/dev/null 2>&1 || true' EXIT
"$LAB" down >/dev/null 2>&1 || true

log "lab up"
t0=$SECONDS
# An IPv6 VIP beside the IPv4 one where the release can redistribute it
# (10.x): the captures then hold both families' raw parts with a VIP listed.
vips=(--vip "$VIP/32")
[[ $REL != 8.4 ]] && vips+=(--vip "$VIP6/128")
"$LAB" up --frr "$REL" --profile frr-k8s "${vips[@]}" >"$OUT/up.log" 2>&1
# The VIP's address on lo only on 10.7: on 8.4 the address would shadow the
# import, on 10.3 address-then-route loses the route in zebra (both drifts
# of docs/FRR-BEHAVIOUR.md, not of this profile).
wa=(--route-only)
[[ $REL == 10.7 ]] && wa=(--with-address)
"$LAB" vip-add node1 "$VIP/32" "${wa[@]}"
"$LAB" vip-add node2 "$VIP/32" "${wa[@]}"
if [[ $REL != 8.4 ]]; then
    "$LAB" vip-add node1 "$VIP6/128" --route-only
    "$LAB" vip-add node2 "$VIP6/128" --route-only
fi
w=$(python3 "$PY" waitpaths "$VIP/32" 2 60)
res "up: sessions and 2 paths at the router in $((SECONDS - t0)) s (2 paths ${w} s after the VIPs)"
ip -n rb-router route show "$VIP" >"$OUT/router-route.txt"
sleep 2

# --- captures -----------------------------------------------------------------
log "captures"
show "show running-config" >"$CAP/bgpd-running-config-frrk8s.txt"
if [[ $REL == 8.4 ]]; then
    python3 "$PY" show "$ROOT/run/frr/rb-node1/zebra.vty" "show running-config" >"$CAP/zebra-running-config-frrk8s.txt"
fi
if grep -q delay-timer "$CAP/bgpd-running-config-frrk8s.txt"; then
    res "delay-timer: the default shows in show running-config: $(grep delay-timer "$CAP/bgpd-running-config-frrk8s.txt")"
else
    res "delay-timer: the default (no bgp route-map delay-timer line) does not show in show running-config"
fi

# --- unchanged file, REPS times, the router sampled ------------------------------
log "unchanged x$REPS"
cp "$LABF/rb-node1/frr.conf" "$OUT/node1.conf"
show "show running-config" >"$OUT/run-before.txt"
lines0=$(wc -l <"$LABF/rb-node1/frr.log")
sample_start unchanged
walls=()
for ((i = 1; i <= REPS; i++)); do walls+=("$(reload "unchanged-$i" "$OUT/node1.conf")"); done
sleep 1
sample_stop
show "show running-config" >"$OUT/run-after.txt"
tail -n +"$((lines0 + 1))" "$LABF/rb-node1/frr.log" >"$OUT/unchanged.bgpd-log"
res "unchanged: $REPS reloads, wall s: $(printf '%s\n' "${walls[@]}" | sort -n | awk '{a[NR]=$1} END {printf "min %.2f median %.2f max %.2f", a[1], a[int((NR+1)/2)], a[NR]}')"
res "unchanged: router paths min $(min_paths unchanged) (changes: $(wc -l <"$OUT/unchanged.samples") samples lines)"
res "unchanged: running config changed by the reloads: $(diff -q "$OUT/run-before.txt" "$OUT/run-after.txt" >/dev/null && echo no || echo yes)"
res "unchanged: first reload's --test diff:"
{ sed -n '/^Lines To/,/^--- frr-reload.py --reload/p' "$OUT/unchanged-1.reload" | grep -v '^--- ' || echo '(none)'; } | sed 's/^/    /' | tee -a "$OUT/results.txt"
res "unchanged: last reload sent:"
sent "unchanged-$REPS" | sed 's/^/    /' | tee -a "$OUT/results.txt"
res "unchanged: node1 log lines during the reloads: $(wc -l <"$OUT/unchanged.bgpd-log")"
grep -vE 'Configuration Read in Took' "$OUT/unchanged.bgpd-log" | sort | uniq -c | sort -rn | head -5 | sed 's/^/    /' | tee -a "$OUT/results.txt" || true

# --- route-map delay: a change on the node until the router sees it --------------
log "route-map delay"
for med in 101 102 103; do
    d=$(python3 "$PY" rmdelay "$N1" "$RT" 198.18.1.2 "$VIP" "$med" 30 "route-map KUBE-VIP-ROUTES-V4 permit 10" "set metric $med")
    res "route-map delay: set metric $med on node1 -> router sees it after $d s"
done
d=$(python3 "$PY" rmdelay "$N1" "$RT" 198.18.1.2 "$VIP" 0 30 "route-map KUBE-VIP-ROUTES-V4 permit 10" "no set metric")
res "route-map delay: no set metric -> router sees MED 0 after $d s"

# --- drained node ------------------------------------------------------------------
log "drain"
maps=(KUBE-VIP-ROUTES-V4)
[[ $REL != 8.4 ]] && maps+=(KUBE-VIP-ROUTES-V6)
drain_lines=()
for m in "${maps[@]}"; do drain_lines+=("route-map $m deny 1" "description ribbridge-drain" "exit"); done
t0=$(date +%s.%N)
python3 "$PY" conf "$N1" "${drain_lines[@]}"
d=$(python3 "$PY" waitpaths "$VIP/32" 1 30) || true
res "drain by vtysh (entry only, no redistribute cycle): router down to 1 path after $d s"
show "show running-config" >"$CAP/bgpd-running-config-frrk8s-drained.txt"
sample_start drained
t0=$(date +%s.%N)
w=$(reload drained "$OUT/node1.conf")
d=$(python3 "$PY" waitpaths "$VIP/32" 2 40) || true
sample_stop
res "drained: reload took $w s; router back to 2 paths $d s after the reload ended"
res "drained: drain entry still in the running config after the reload: $(show "show running-config" | grep -c 'deny 1$' || true)"
res "drained: reload sent:"
sent drained | sed 's/^/    /' | tee -a "$OUT/results.txt"
if [[ $d == timeout* ]]; then
    # Leave the lab as it was for the next steps: the redistribution cycled.
    kw=table-direct
    [[ $REL == 8.4 ]] && kw=table
    cyc=("router bgp 64512" "address-family ipv4 unicast" "no redistribute $kw 198 route-map KUBE-VIP-ROUTES-V4" "redistribute $kw 198 route-map KUBE-VIP-ROUTES-V4" "end")
    python3 "$PY" conf "$N1" "${cyc[@]}"
    d=$(python3 "$PY" waitpaths "$VIP/32" 2 30) || true
    res "drained: after a redistribute cycle by hand the router has 2 paths after $d s"
fi

# --- changed files -------------------------------------------------------------------
changed() { # NAME FILE WHAT
    log "changed: $1"
    sample_start "$1"
    local w; w=$(reload "$1" "$2")
    sleep 7
    sample_stop
    res "changed ($3): reload $w s; router paths min $(min_paths "$1"); sent:"
    sent "$1" | sed 's/^/    /' | tee -a "$OUT/results.txt"
    sample_start "$1-back"
    w=$(reload "$1-back" "$OUT/node1.conf")
    sleep 7
    sample_stop
    res "changed ($3), back to the original: reload $w s; router paths min $(min_paths "$1-back"); sent:"
    sent "$1-back" | sed 's/^/    /' | tee -a "$OUT/results.txt"
}
# a. a neighbour added: the mapping with a third peer for rb-node1.
python3 - "$LABF/frr-peers.json" "$OUT/peers-plus.json" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
m["hostOverrides"]["rb-node1"].append({"peerAddress": "198.18.1.99", "peerASN": 64513})
json.dump(m, open(sys.argv[2], "w"))
EOF
"$RIBBRIDGE_BIN" render --peers "$OUT/peers-plus.json" --template "$REPO/scripts/lab-node-frrk8s.conf.j2" \
    --hostname rb-node1 --router-id 198.18.1.2 --frr-release "$RELEASE" --out "$OUT/node1-neighbour.conf" 2>/dev/null
changed neighbour "$OUT/node1-neighbour.conf" "neighbour 198.18.1.99 added, with its route-maps and prefix-lists"
# b. a prefix-list entry added to the VIPs' list.
{ sed '/^end$/d' "$OUT/node1.conf"; echo "ip prefix-list KUBE-VIP-PREFIXES-V4 seq 2 permit 192.0.2.11/32"; echo end; } >"$OUT/node1-plentry.conf"
changed plentry "$OUT/node1-plentry.conf" "ip prefix-list KUBE-VIP-PREFIXES-V4 seq 2 added"
# c. a route-map entry ahead of the VIPs' permit, setting a community (an
#    attribute the router's multipath ignores, unlike a MED): the time until
#    the router's path from node1 carries it.
{ sed '/^end$/d' "$OUT/node1.conf"
  printf '%s\n' "route-map KUBE-VIP-ROUTES-V4 permit 5" " match ip address prefix-list KUBE-VIP-PREFIXES-V4" \
      " set community 64512:55" "exit" end; } >"$OUT/node1-rmentry.conf"
rmentry() { # NAME FILE PRESENT WHAT
    log "changed: $1"
    sample_start "$1"
    local t0 t1 d
    t0=$(date +%s.%N)
    "$LAB" reload node1 "$2" >"$OUT/$1.reload" 2>&1
    t1=$(date +%s.%N)
    d=$(python3 "$PY" seen "$RT" 198.18.1.2 "$VIP/32" 64512:55 "$3" "$t1" 30) || true
    sleep 1
    sample_stop
    res "changed ($4): reload $(echo "$t1 - $t0" | bc) s; the router's path from node1 shows it $d s after the reload ended; router paths min $(min_paths "$1"); sent:"
    sent "$1" | sed 's/^/    /' | tee -a "$OUT/results.txt"
}
rmentry rmentry "$OUT/node1-rmentry.conf" 1 "route-map KUBE-VIP-ROUTES-V4 permit 5 (set community 64512:55) ahead of permit 10"
rmentry rmentry-back "$OUT/node1.conf" 0 "route-map entry removed again"

# --- the read cost with 64 neighbours ---------------------------------------------------
log "64 neighbours"
python3 "$PY" peers64 "$LABF/frr-peers.json" "$OUT/peers-64.json"
"$RIBBRIDGE_BIN" render --peers "$OUT/peers-64.json" --template "$REPO/scripts/lab-node-frrk8s.conf.j2" \
    --hostname rb-node1 --router-id 198.18.1.2 --frr-release "$RELEASE" --out "$OUT/node1-64.conf" 2>/dev/null
"$LAB" node-config node1 "$OUT/node1-64.conf" >/dev/null 2>&1
python3 "$PY" waitpaths "$VIP/32" 2 60 >/dev/null || true
sleep 3
res "64 neighbours: $(grep -c '^ neighbor .* remote-as' "$OUT/node1-64.conf") neighbours, $(grep -c '^route-map' "$OUT/node1-64.conf") route-map entries, $(grep -c 'prefix-list .* seq' "$OUT/node1-64.conf") prefix-list entries in the file"
cmds=("show running-config" "show route-map json" "show route-map KUBE-VIP-ROUTES-V4 json"
    "show ip prefix-list json" "show ip prefix-list KUBE-VIP-PREFIXES-V4 json"
    "show bgp neighbors json" "show bgp vrf default json")
[[ $REL != 8.4 ]] && cmds+=("show configuration running" "show configuration running json")
python3 "$PY" cost "$N1" "$(bgpd_pid)" "$READS" "${cmds[@]}" | tee "$OUT/cost-64.jsonl" | tee -a "$OUT/results.txt"
# The same with the 2-neighbour profile, for scale.
"$LAB" node-config node1 "$OUT/node1.conf" >/dev/null 2>&1
sleep 3
python3 "$PY" cost "$N1" "$(bgpd_pid)" "$READS" "show running-config" | sed 's/^/2 neighbours: /' | tee -a "$OUT/results.txt"
log "done"
