#!/usr/bin/env bash
# The main job on the lab, on a fresh Debian 12 machine as root: installs what
# is missing, builds ribbridge, brings up a 2-node lab on FRR ${FRR:-10.7},
# has both nodes advertise the VIP the way kube-vip does, and shows the
# router's ECMP route to it (2 nexthops). The lab stays up for exploring;
# `scripts/lab.sh down` removes it.
set -euo pipefail
cd "$(dirname "$0")/.."
FRR=${FRR:-10.7}
VIP=${VIP:-192.0.2.10/32}

[[ $(id -u) -eq 0 ]] || { echo "demo.sh: must run as root (network namespaces)" >&2; exit 1; }
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "prerequisites (iproute2, debootstrap, FRR $FRR)"
scripts/install-deps.sh
scripts/install-frr.sh "$FRR"

say "build"
cargo build --release --locked
./target/release/ribbridge --version

say "lab: router + 2 nodes, FRR $FRR"
# One lab per machine: a test run holds this lock while its lab is up.
exec 9>/run/ribbridge-lab.lock
flock -n 9 || { echo "demo.sh: a test run is using the lab (/run/ribbridge-lab.lock); try again when it ends" >&2; exit 1; }
scripts/lab.sh down >/dev/null 2>&1 || true
# lab.sh renders the nodes' frr.conf with the ribbridge just built.
RIBBRIDGE_BIN=./target/release/ribbridge scripts/lab.sh up --frr "$FRR" --nodes 2 --vip "$VIP"

say "kube-vip on both nodes: $VIP into table 198, proto 248"
scripts/lab.sh vip-add node1 "$VIP"
scripts/lab.sh vip-add node2 "$VIP"
ip -n rb-node1 route show table 198

say "router: waiting for both nodes' paths"
fam=-4; [[ $VIP == *:* ]] && fam=-6
deadline=$((SECONDS + 30))
until [[ $(ip -n rb-router "$fam" route show "$VIP" | grep -c 'nexthop via') -ge 2 ]]; do
    ((SECONDS < deadline)) || { echo "demo.sh: the router did not get 2 paths in 30 s" >&2; exit 1; }
    sleep 0.2
done
scripts/lab.sh vtysh rb-router "show bgp $([[ $fam == -6 ]] && echo ipv6 || echo ipv4) unicast $VIP" 2>/dev/null | sed -n '1,4p'
say "router's kernel route to $VIP: $(ip -n rb-router "$fam" route show "$VIP" | grep -c 'nexthop via') ECMP nexthops"
ip -n rb-router "$fam" route show "$VIP"

say "ribbridge beside node1's FRR, and on the router counting the VIP's paths"
RB=$PWD/target/release/ribbridge
ip netns exec rb-node1 "$RB" run --frr-dir "$(scripts/lab.sh sockdir rb-node1)" \
    >/run/ribbridge-lab/ribbridge-node1.log 2>&1 &
ip netns exec rb-router "$RB" run --vantage router --table 254 --vip "$VIP" \
    >/run/ribbridge-lab/ribbridge-router.log 2>&1 &
deadline=$((SECONDS + 20))
until ip netns exec rb-node1 "$RB" status --json 2>/dev/null | grep -q '"state": "advertised"'; do
    ((SECONDS < deadline)) || { echo "demo.sh: ribbridge did not report a consistent VIP in 20 s; see /run/ribbridge-lab/ribbridge-node1.log" >&2; exit 1; }
    sleep 0.2
done
ip netns exec rb-node1 "$RB" status
echo
ip netns exec rb-router "$RB" status
echo
echo "metrics: ip netns exec rb-node1 curl -s 127.0.0.1:7585/metrics | grep ^ribbridge_"
echo
echo "The lab is still up: try scripts/lab.sh vip-del node1 $VIP, then look again. Remove it with: scripts/lab.sh down"
