#!/usr/bin/env bash
# Every test of ribbridge, on a fresh Debian 12 machine, as root:
#   formatting, clippy (warnings are errors), unit and integration tests, a
#   bounded fuzz run of every decoder (FUZZ_SECS per target, default 10: the
#   long runs are scripts/fuzz.sh by hand), the
#   deployment files (manifests against the Kubernetes schema and the
#   security posture, the container image, the systemd unit), and the netns
#   tests against the real kernel and FRR 8.4, 10.3 and 10.7 (the image among
#   them, beside FRR 10.7).
# Installs what is missing first (FRR releases, iproute2). A netns test that
# cannot run (no root, no FRR) fails; nothing is skipped silently.
set -euo pipefail
cd "$(dirname "$0")/.."

t0=$SECONDS
step() { echo "== test.sh: $* ($((SECONDS - t0)) s)" >&2; }

[[ $(id -u) -eq 0 ]] || { echo "test.sh: must run as root (the netns tests need it)" >&2; exit 1; }

# The build's disk footprint, kept small: no incremental state (CI builds
# once), and line tables only for debug info (backtraces keep file:line).
# A clean run's target/ and fuzz/target/ come to about GIB_NEEDED below.
export CARGO_INCREMENTAL=0
export CARGO_PROFILE_DEV_DEBUG=line-tables-only
export CARGO_PROFILE_TEST_DEBUG=line-tables-only
GIB_NEEDED=6
free_kib=$(df -Pk . | awk 'NR == 2 { print $4 }')
if (( free_kib < GIB_NEEDED * 1024 * 1024 )); then
    echo "test.sh: only $((free_kib / 1024)) MiB free on the filesystem of $PWD;" \
        "the build and the labs need about ${GIB_NEEDED} GiB: free some space" \
        "(an old target/ directory, say) and run again" >&2
    exit 1
fi

step "prerequisites"
scripts/install-deps.sh
scripts/install-frr.sh

step "cargo fmt --check"
cargo fmt --all -- --check

# --all-targets leaves out the targets with `test = false` or no harness
# (the netns suite and the e2e bench), and named beside it with --test they
# are left out still (cargo lints neither: a compile error in the bench went
# unseen): they are linted in a run of their own.
# The netns suite's binary carries the failpoints (src/fault.rs) its
# supervision tests arm; the shipped build does not: both are linted.
step "cargo clippy --all-targets, --test netns --test bench_e2e (--features failpoints), and the shipped build -- -D warnings"
cargo clippy --all-targets --features failpoints --locked -- -D warnings
cargo clippy --test netns --test bench_e2e --features failpoints --locked -- -D warnings
cargo clippy --lib --bins --locked -- -D warnings

step "unit and integration tests"
cargo test --locked --features failpoints

# The fuzz step (a release build of its own, ~5.5 min cold, then 10 s per
# target) runs beside the steps below at the lowest CPU priority: the netns
# tests mostly wait on FRR's timers, so it fills idle cores instead of
# adding ~7 min to the command. Its output is printed, and its exit code
# checked, at the end. Its own process group, so a failing step stops it.
step "fuzz: every cargo-fuzz target for ${FUZZ_SECS:-10} s (scripts/fuzz.sh), in the background at nice 19"
fuzz_log=$(mktemp)
setsid nice -n 19 scripts/fuzz.sh "${FUZZ_SECS:-10}" >"$fuzz_log" 2>&1 &
fuzz_pid=$!

# The container images (~8.5 min cold on 2 cores: the static release build,
# then the crate again with its failpoints; ~2 s when current; the podman
# build itself under a second) are built the same way, beside the netns
# tests that do not need them. The tests that do (image, cri, containerd)
# and the systemd unit's check (the same static binary) run once it is done.
step "container images: static release binary in FROM scratch, podman build offline, in the background at nice 19"
image_log=$(mktemp)
image_out=$(mktemp)
setsid nice -n 19 bash -c 'set -e
    scripts/build-image.sh
    scripts/build-image.sh --features failpoints' >"$image_out" 2>"$image_log" &
image_pid=$!
out=
cleanup() {
    kill -- -"$fuzz_pid" 2>/dev/null || true
    kill -- -"$image_pid" 2>/dev/null || true
    rm -f "$fuzz_log" "$image_log" "$image_out"
    if [[ -n $out ]]; then
        rm -f "$out"
        scripts/lab.sh down >/dev/null 2>&1 || true
    fi
}
trap cleanup EXIT

# Costs below: this 2-core machine, shared with other builds.
# ~5 s: strict schema validation of every manifest (Kubernetes 1.33, offline:
# kubernetes-validate's bundled schemas, in the venv install-deps.sh makes),
# the posture rules, and the self-test that breaks them one by one. Run in a
# network namespace of its own (`unshare -n`): offline is proven, not assumed.
step "manifests: Kubernetes schema (offline) and security posture, then the checker's self-test"
unshare -n "${RIBBRIDGE_CACHE:-/var/cache/ribbridge}/venv/bin/python" scripts/check-manifests.py
unshare -n "${RIBBRIDGE_CACHE:-/var/cache/ribbridge}/venv/bin/python" scripts/check-manifests.py --self-test

# ~2 s: the alerting rules (deploy/prometheus/) checked and unit-tested by
# promtool (every alert firing and not firing), the PrometheusRule generated
# from them equal to the committed one, every alert with its runbook, and
# every Grafana panel's expression valid PromQL.
step "alerting rules: promtool check and unit tests, PrometheusRule, runbooks, dashboard PromQL"
promtool check rules deploy/prometheus/ribbridge-rules.yaml
promtool test rules deploy/prometheus/tests/*.test.yaml
"${RIBBRIDGE_CACHE:-/var/cache/ribbridge}/venv/bin/python" scripts/gen-prometheus-objects.py --check
"${RIBBRIDGE_CACHE:-/var/cache/ribbridge}/venv/bin/python" scripts/check-dashboard.py

# Costs of the netns tests, one at a time:
# image.rs adds ~11 s (a 10.7 lab, three containers); cri.rs
# ~8 s (the same image unpacked, a 10.7 lab, the manifests' OCI specs from
# scripts/oci-spec.py run by runc three times, one preStop exec);
# containerd.rs ~10 s (a 10.7 lab; a containerd of its own started and the
# pause, shipped and failpoints images imported in under 1 s; one pod, two
# containers through the CRI: probes, a heal, the preStop ExecSync, exit 4).
# intent.rs adds ~110 s (one frr-k8s lab per release for its 2 unchanged
# and 6 changed reloads, filtered and unconfigured checks, bgpd read whole
# every 3 s, ~31-37 s each; the 1 000-VIP mass heal on 10.7, 10-29 s);
# day2.rs adds ~28 s (an frr-k8s lab per release, 10.3 and 10.7, ~14 s
# each: the listed VIPs advertised, the unlisted ones filtered, held 7 s).
# differential.rs adds ~72 s (a 2-node lab per release restarted
# with the test's own base configuration, ~7 s; 10.7: 200 policies in 50
# rounds, ~41 s; 8.4: 60 in 30 rounds, ~31 s; ~0.5-0.8 s a round:
# RIBBRIDGE_DIFF_POLICIES=2000 on 10.7 took 322 s, 1000 on 8.4 252 s).
# drain.rs's reload tests ~15 s per release, its drain beside kube-vip's
# heartbeat ~50 s (3 rounds on 8.4, 9 s each, and 10.7, 2 s each, in a lab
# per release; RIBBRIDGE_DRAIN_ROUNDS=20 takes 250 s), its drain on a host
# as it is (the intent's directory missing) ~10 s.
# The bridge's heartbeats: 10 beats on 10.3 and 10.7 (~15 s each), 10 and
# 30 on 8.4; faults.rs's zebra restarts, 4 per release (~23 s each;
# RIBBRIDGE_ZEBRA_RESTARTS for more).
# The netns run costs ~1 300-1 360 s in all (clean clones, 2026-12-06 and -07;
# the whole command 1 507-1 592 s); its largest: the soak
# (~105 s at CI's 90 s), the writer's backend probes (~55 s), the million changes
# (~25-50 s), the restart storm and supervision (~38 s each).
# alerts.rs adds ~40 s (a 10.7 lab, three ribbridge, a Prometheus scraping
# every second; 23 dashboard expressions evaluated in the same lab), and
# ~24 s per release for its graceful-restart power-off (an frr-k8s lab with
# a BMP station, four ribbridge, a Prometheus; 8.4, 10.3 and 10.7).
# first_hour.rs adds ~7 s (a one-node 10.7 lab; README's "Run it on one
# node" run line by line).
# cluster.rs adds ~35-39 s (a 10.7 frr-k8s graceful-restart lab, ~4 s up;
# two nodes' ribbridge, a BMP station and a Prometheus scraping every
# second; `ribbridge cluster` polled through backend down, drain, a stopped
# ribbridge and a node powered off, each reflected within 0.4-7 s;
# RIBBRIDGE_RECORD_CLUSTER=DIR records the power-off's answers).
# upgrades.rs adds ~50 s (two graceful-restart labs, five in-place FRR
# switches, lab.sh switch, the last one drained).
# gobgp.rs adds ~75 s (a GoBGP lab of its own per test, scripts/lab-gobgp.sh,
# ~7 s up): IPv4 ~37-46 s, of which up to 8 s GoBGP's dial back-off, 10-14 s
# its re-enabled peer and 5-15 s its reconnect after the station's restart
# (its next statistics report); VPNv4/EVPN ~30 s (on the bmp-families branch;
# on main at cd7d1ae it fails in ~15 s: the station ends the session).
# faults.rs's restart storm adds ~35 s (3 restarts of node1's whole FRR; the
# bench's 20 take ~4 min), its watched-table flood ~5 s.
# supervision.rs adds ~46 s (a 10.7 lab with four daemons, each killed,
# wedged or hung through a failpoint; a 10.7 BMP lab with a station whose
# session panics).
# verdicts.rs adds ~70 s (a 10.7 lab: the per-family outbound deny in repair
# mode through bgpd's route-map delay timer, then daemon and one-shot
# compared on five states, one of them frr#22654's race; an 8.4 lab: the
# dropped import; each one-shot read waits out the daemon's grace, up to 8 s).
# The netns binary runs twice (the tests that need no image first, the
# image's three after the build); each run must run something and pass it all.
netns_run() {
    cargo test --locked --features failpoints --test netns -- --test-threads=1 "$@" 2>&1 | tee "$out"
    # A netns binary that ran nothing is a failure, not a pass.
    grep -Eq 'test result: ok\. [1-9][0-9]* passed; 0 failed; 0 ignored' "$out" \
        || { echo "test.sh: the netns tests did not all run (see above)" >&2; exit 1; }
}
IMAGE_TESTS=(containerd:: cri:: image::)
step "netns tests (real kernel, real FRR; one at a time), all but the image's"
# Each lab owns the rb-* namespaces: the tests must not run concurrently.
out=$(mktemp)
skips=()
for t in "${IMAGE_TESTS[@]}"; do skips+=(--skip "$t"); done
netns_run "${skips[@]}"

step "container images: waiting for the build"
image_rc=0
wait "$image_pid" || image_rc=$?
cat "$image_log" >&2
(( image_rc == 0 )) || { echo "test.sh: the image build failed (exit $image_rc, see above)" >&2; exit 1; }
{ read -r RIBBRIDGE_IMAGE || true; read -r RIBBRIDGE_FAILPOINTS_IMAGE || true; } <"$image_out"
[[ -n ${RIBBRIDGE_IMAGE:-} && -n ${RIBBRIDGE_FAILPOINTS_IMAGE:-} ]] \
    || { echo "test.sh: the image build printed no image names (see above)" >&2; exit 1; }
export RIBBRIDGE_IMAGE RIBBRIDGE_FAILPOINTS_IMAGE

# ~5 s: systemd-analyze verify and security (exposure at most 2.5), then the
# FRR 10.7 root booted with systemd-nspawn, the unit started beside FRR in
# repair and in observe mode.
step "systemd unit: verify, exposure, started beside FRR 10.7 in systemd-nspawn"
scripts/check-systemd-unit.sh

step "netns tests: the image beside FRR 10.7 (image, cri, containerd)"
netns_run "${IMAGE_TESTS[@]}"

step "fuzz (started after the unit tests): waiting for it"
fuzz_rc=0
wait "$fuzz_pid" || fuzz_rc=$?
cat "$fuzz_log" >&2
(( fuzz_rc == 0 )) || { echo "test.sh: the fuzz step failed (exit $fuzz_rc, see above)" >&2; exit 1; }

step "all passed"
