#!/usr/bin/env bash
# The end-to-end bench on the lab (real kernel, real FRR): observation
# latency against `ip monitor`, time to heal per drift case and release
# (ribbridge / kube-vip's 5 s re-assertion alone / nothing), idle cost,
# memory per route (node: 10k and 100k routes; router: 1M in main), and a node "powered off" with no drain / after `ribbridge drain` /
# after a clean bgpd stop (probes lost, the router's dead path). Prints a table and writes JSON. Method: docs/PERFORMANCE.md; the
# driver is netns-tests/bench_e2e.rs. Root only. Not part of scripts/test.sh.
#
#   scripts/bench-e2e.sh [--frr "8.4 10.3 10.7"] [--runs 20] [--out FILE]
#
# Environment (defaults): BENCH_RUNS=20 runs per heal cell, BENCH_FAIL_STOP=3
# (a cell stops after this many runs in a row not healed within the bound and
# none healed), BENCH_BOUND_S=12, BENCH_OBS=40 observed changes,
# BENCH_IDLE_S=60, BENCH_SCALE="10000 100000" (route counts of the node's
# memory cells; "" skips them), BENCH_ROUTER_ROUTES=1000000 (the router
# vantage's memory cell, once per bench, its own namespace; 0 skips it),
# BENCH_REBOOT=1 (0 skips the power-off cells), BENCH_ONLY_REBOOT=0 (1: only
# those, ~70 s per release), BENCH_ONLY_MEMORY=0 (1: only the memory cells,
# ~3.5 min for the three releases, 12 s of it inserting the million routes).
# The published run (BENCH_RUNS=10 BENCH_OBS=30 BENCH_SCALE_READY_S=60) took
# 892 s for the three releases on the 2-core lab machine; the defaults add ~2 min per release.
set -Eeuo pipefail
cd "$(dirname "$0")/.."
frr="8.4 10.3 10.7"
out=bench-e2e.json
runs=${BENCH_RUNS:-20}
while [[ $# -gt 0 ]]; do
    case $1 in
        --frr) frr=${2:?--frr needs releases}; shift 2 ;;
        --runs) runs=${2:?--runs needs a number}; shift 2 ;;
        --out) out=${2:?--out needs a file}; shift 2 ;;
        *) echo "bench-e2e.sh: unknown argument '$1' (usage: [--frr \"8.4 10.3 10.7\"] [--runs N] [--out FILE])" >&2; exit 2 ;;
    esac
done
[[ $(id -u) -eq 0 ]] || { echo "bench-e2e.sh: needs root (namespaces, FRR); run it with sudo" >&2; exit 2; }
out=$(realpath -m "$out")

# --release: the figures are for the optimised binary.
cargo test --release --test bench_e2e --no-run

# The driver takes /run/ribbridge-lab.lock for each lab it builds (as the
# netns tests do) and tears the lab down when it ends; if it dies, this
# takes the lock and removes whatever it left.
cleanup() {
    flock /run/ribbridge-lab.lock scripts/lab.sh down >/dev/null 2>&1 || true
}
trap cleanup EXIT
start=$(date +%s)
BENCH_FRR=$frr BENCH_RUNS=$runs BENCH_OUT=$out \
    cargo test --release --test bench_e2e
echo "bench-e2e: $(( $(date +%s) - start )) s"
