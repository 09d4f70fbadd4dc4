#!/usr/bin/env bash
# The end-to-end bench on the lab (real kernel, real FRR): observation
# latency against `ip monitor`, time to heal per drift case and release
# (ribbridge / kube-vip's 5 s re-assertion alone / nothing; p50 and p99),
# availability under kube-vip's heartbeat (the router's path sampled at every
# route event), churn on a healthy lab (false drift), idle cost, memory per
# route (node: 10k and 100k routes; router: 1M in main), and a node
# "powered off" with no drain / after `ribbridge drain` / after a clean bgpd
# stop. Prints a table and writes JSON, and keeps the daemon's log of every
# ribbridge cell beside it (FILE.<frr>-<cell>.log). Method:
# docs/PERFORMANCE.md; the driver is netns-tests/bench_e2e.rs. Root only.
# Not part of scripts/test.sh.
#
#   scripts/bench-e2e.sh [--frr "8.4 10.3 10.7"] [--runs 20] [--cells "..."] [--soak] [--out FILE]
#
# Cells (--cells or BENCH_CELLS, default all but the soaks): reboot
# observation idle availability churn heal scale (scale: the memory cells).
# --soak (BENCH_SOAK=1) adds the 10-minute soaks on 8.4 (600 beats at 1 Hz,
# 120 at 5 s).
# Environment (defaults): BENCH_RUNS=20 runs per heal cell, BENCH_MODES
# ("ribbridge reassert nothing"), BENCH_FAIL_STOP=3 (a cell stops after
# this many runs in a row not healed within the bound and none healed),
# BENCH_BOUND_S=12, BENCH_OBS=40 observed changes, BENCH_IDLE_S=60,
# BENCH_AVAIL_BEATS=60 and BENCH_AVAIL_PERIOD_S=5 (kube-vip's pace),
# BENCH_CHURN=1000 changes at 50/s, BENCH_SCALE_MODES="observe repair" (the
# modes of the memory cells: routes the lab's route-map filters, so repair
# must take no action), BENCH_SCALE="10000 100000" (route counts
# of the node's memory cells; "" skips them), BENCH_ROUTER_ROUTES=1000000
# (the router vantage's memory cell, once per bench, its own namespace; 0
# skips it), BENCH_REBOOT=1 (0 skips the power-off cells), BENCH_REBOOT_GR
# ("0 1": the power-off cells without and with graceful restart, the
# frr-k8s profile; with it a cell without a drain lasts ~140 s),
# BENCH_ONLY_REBOOT=0 (1: only those, ~6 min per release), BENCH_ONLY_MEMORY=0
# (1: only the memory cells, ~3.5 min for the three releases, 12 s of it
# inserting the million routes).
# The full publication (all cells, 20 runs, three releases) takes about
# 50 minutes on the 2-core lab machine, waiting for no other lab user: per
# release ~6 min of power-off cells, ~20 s observation, 60 s idle, ~320 s
# availability, ~30 s churn, 2-4 min of heal cells (the kube-vip mode on
# 10.7 is 20 runs of ~5 s), ~1 min of memory cells; --soak adds 21 minutes
# on 8.4.
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
        --cells) export BENCH_CELLS=${2:?--cells needs a list}; shift 2 ;;
        --soak) export BENCH_SOAK=1; shift ;;
        *) echo "bench-e2e.sh: unknown argument '$1' (usage: [--frr \"8.4 10.3 10.7\"] [--runs N] [--cells \"heal churn ...\"] [--soak] [--out FILE])" >&2; exit 2 ;;
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
