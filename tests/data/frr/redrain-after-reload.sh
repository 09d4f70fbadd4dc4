#!/usr/bin/env bash
# A drained node reloaded the way frr-k8s does (the reload removes the
# drain's entry), then the drain re-applied DELAY seconds after the reload
# returned (the entry and the redistribute cycle, as `ribbridge drain` sends
# them): the router's path counts seen meanwhile (docs/FRR-BEHAVIOUR.md,
# "Reloads (frr-reload.py)"). Builds and removes its own lab:
#
#   flock /run/ribbridge-lab.lock tests/data/frr/redrain-after-reload.sh 8.4|10.3|10.7 DELAY OUTDIR
set -Eeuo pipefail

REL=${1:?usage: redrain-after-reload.sh 8.4|10.3|10.7 DELAY OUTDIR}
DELAY=${2:?usage: redrain-after-reload.sh 8.4|10.3|10.7 DELAY OUTDIR}
OUT=${3:?usage: redrain-after-reload.sh 8.4|10.3|10.7 DELAY OUTDIR}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LAB=$HERE/../../../scripts/lab.sh
PY=$HERE/reload_measure.py
CACHE=${RIBBRIDGE_CACHE:-/var/cache/ribbridge}
case $REL in
    8.4) ROOT="" kw=table ;;
    10.3 | 10.7) ROOT=$CACHE/frr-$REL kw=table-direct ;;
    *) echo "redrain-after-reload: unknown release $REL" >&2; exit 2 ;;
esac
N1=$ROOT/run/frr/rb-node1/bgpd.vty
mkdir -p "$OUT"
S=""
trap '[[ -n $S ]] && kill "$S"; "$LAB" down >/dev/null 2>&1 || true' EXIT
"$LAB" down >/dev/null 2>&1 || true
"$LAB" up --frr "$REL" --profile frr-k8s >"$OUT/up.log" 2>&1
"$LAB" vip-add node1 192.0.2.10/32
"$LAB" vip-add node2 192.0.2.10/32
python3 "$PY" waitpaths 192.0.2.10/32 2 60 >/dev/null
maps=(KUBE-VIP-ROUTES-V4) fams=(ipv4)
if [[ $REL != 8.4 ]]; then maps+=(KUBE-VIP-ROUTES-V6); fams+=(ipv6); fi
drain=()
for m in "${maps[@]}"; do drain+=("route-map $m deny 1" "description ribbridge-drain" "exit"); done
drain+=("router bgp 64512")
for i in "${!fams[@]}"; do
    drain+=("address-family ${fams[$i]} unicast" "no redistribute $kw 198 route-map ${maps[$i]}"
        "redistribute $kw 198 route-map ${maps[$i]}" "exit-address-family")
done
drain+=(exit)
cp /run/ribbridge-lab/rb-node1/frr.conf "$OUT/node1.conf"
python3 "$PY" conf "$N1" "${drain[@]}"
echo "$REL: drained (entry and cycle): 1 path after $(python3 "$PY" waitpaths 192.0.2.10/32 1 30) s"
: >"$OUT/samples"
python3 "$PY" sample "$OUT/samples" 192.0.2.10/32 & S=$!
sleep 0.3
"$LAB" reload node1 "$OUT/node1.conf" >"$OUT/reload.out" 2>&1
sleep "$DELAY"
python3 "$PY" conf "$N1" "${drain[@]}"
sleep 12
kill "$S"; wait "$S" || true; S=""
echo "$REL: drain re-applied $DELAY s after the reload: path counts seen (epoch s, count):"
cat "$OUT/samples"
