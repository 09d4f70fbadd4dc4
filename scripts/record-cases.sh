#!/usr/bin/env bash
# Record the pure core's cases from real lab runs and file them under
# tests/data/reconcile/<case>/, then bless their expectations.
#
#   scripts/record-cases.sh [CASE...]             run the netns tests that record
#                                                 the cases (root, FRR; default: all)
#   scripts/record-cases.sh --from DIR [CASE...]  file from an earlier run's
#                                                 RIBBRIDGE_KEEP_RECORDS=DIR, no lab
#   scripts/record-cases.sh --list                the cases and where they come from
#
# Each netns test runs with RIBBRIDGE_KEEP_RECORDS=DIR: every daemon it starts
# leaves DIR/<test>/<namespace>[-N].{jsonl,config.json,case.json}
# (netns-tests/support/daemon.rs). A case is one of those daemons:
#   events.jsonl  its `ribbridge run --record` log, unchanged
#   config.json   the reconcile::Config it ran with
#   case.json     where it comes from and the state changes the daemon logged
#                 (tests/reconcile_cases.rs checks the replay reaches them)
#   expected.json written by `RIBBRIDGE_BLESS=1 cargo test --test reconcile_cases`
# A test that fails files nothing: its cases keep their previous recording.
set -euo pipefail
cd "$(dirname "$0")/.."

# case | netns test | daemon (namespace, -N: the Nth daemon there) | what it shows
CASES='
8.4-heartbeat|bridge::bridge_consistent_and_heartbeat_frr_8_4|rb-node1|kube-vip re-asserts every second: 8.4 drops the import at every beat; reimport_table on the withdrawal zebra sends heals each at once, no drift reported
10.3-heartbeat|bridge::bridge_consistent_and_heartbeat_frr_10_3|rb-node1|re-assertions every second on 10.3 (60 when recorded, 20 in the test since): counted, never a change
10.7-heartbeat|bridge::bridge_consistent_and_heartbeat_frr_10_7|rb-node1|re-assertions every second on 10.7 (60 when recorded, 20 in the test since): counted, never a change
8.4-realm-replace-observe|bridge::drift_8_4_realm_replace_drops_the_import|rb-node1|a realm replace drops the import: not_redistributed, reported, no action
8.4-realm-replace-repair|bridge::drift_8_4_realm_replace_drops_the_import|rb-node1-2|the same drift found at start and healed by reimport_table
8.4-address-shadows-observe|bridge::drift_8_4_address_shadows_the_import|rb-node1|address then route: the connected route shadows the import
8.4-address-shadows-repair|bridge::drift_8_4_address_shadows_the_import|rb-node1-2|shadowed in repair mode: no safe action, none taken
10.3-address-then-route-observe|bridge::drift_10_3_address_then_route_is_lost_in_zebra|rb-node1|address then route: zebra never learns the route (kernel_only), reported
10.3-address-then-route-repair|bridge::drift_10_3_address_then_route_is_lost_in_zebra|rb-node1-2|the same, healed by address_cycle (--heal-addresses)
10.7-route-then-address-observe|bridge::drift_10_7_route_then_address_is_lost_in_zebra|rb-node1|route then address in one batch (frr#22654): kernel_only, reported
10.7-route-then-address-repair|bridge::drift_10_7_route_then_address_is_lost_in_zebra|rb-node1-2|the same, healed by realm_toggle
8.4-withdraw|bridge::withdraw_and_router_ecmp_frr_8_4|rb-node1|the VIP advertised, then deleted: withdrawn, no drift, no action
10.3-withdraw|bridge::withdraw_and_router_ecmp_frr_10_3|rb-node1|the VIP advertised, then deleted: withdrawn, no action
10.7-withdraw|bridge::withdraw_and_router_ecmp_frr_10_7|rb-node1|the VIP advertised, then deleted: withdrawn, no action
10.7-router-ecmp|bridge::withdraw_and_router_ecmp_frr_10_7|rb-router|the router vantage: main table, ECMP 2 -> 1 -> 2 legs, advertised throughout
8.4-zebra-bgpd-restart|faults::faults_zebra_and_bgpd_restart_frr_8_4|rb-node1|zebra SIGKILLed and restarted 10 times (no drift), then bgpd: no_peer, and a fresh session'"'"'s startup grace
10.3-zebra-bgpd-restart|faults::faults_zebra_and_bgpd_restart_frr_10_3|rb-node1|the same on 10.3
10.7-zebra-bgpd-restart|faults::faults_zebra_and_bgpd_restart_frr_10_7|rb-node1|the same on 10.7
10.7-drain-reload|drain::drain_through_a_reload_frr_10_7|rb-node1|an frr-k8s reload removes the drain entry from the bgpd configuration: the drain recorded in the intent file is re-applied once (a core action, through the ceiling); drained throughout, no heal
10.3-killed-during-drift|faults::faults_killed_during_drift_frr_10_3|rb-node1-2|restarted after a SIGKILL during a kernel_only drift: found again from scratch and healed
10.7-writer-and-address|writer::writer_and_address_frr_10_7|rb-node1|the lab kube-vip (1 s ticks) SIGKILLed: orphaned, back with its beats, killed again within a tick: orphaned (its old tick kept); restarted with its backend down: the address deleted, the route left, zebra drops it: withdrawn, never healed; a bare route advertised: blackhole, not healed; a flaky backend: flapping, not healed
10.7-backend-probes|writer::backend_probes_frr_10_7|rb-node1|ribbridge probes the lab backend (withdraw = true) beside the lab kube-vip: draining is unready, refused is blackhole, up advertised, nothing withdrawn beside the live writer; the writer SIGKILLed and the backend down: withdrawn by ribbridge (one withdraw), put back when the backend is up (one restore); the route deleted under a healthy backend: capacity_lost
8.4-writer-and-address|writer::writer_and_address_frr_8_4|rb-node1|the lab kube-vip on 8.4: its address shadows the import; restarted with its backend down: withdrawn, never healed; a bare route advertised: blackhole, not healed
'

rows() { grep -v '^$' <<<"$CASES"; }
field() { cut -d'|' -f"$1"; }

from=""
case ${1:-} in
    --list) rows | column -t -s'|'; exit 0 ;;
    --from) from=${2:?--from needs a directory}; shift 2 ;;
    -h | --help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac

wanted=("$@")
if [[ ${#wanted[@]} -eq 0 ]]; then
    mapfile -t wanted < <(rows | field 1)
fi
for c in "${wanted[@]}"; do
    rows | field 1 | grep -qxF "$c" || { echo "record-cases: no case '$c' (see --list)" >&2; exit 2; }
done
row() { rows | grep "^$1|"; }

failed=()
if [[ -z $from ]]; then
    [[ $(id -u) -eq 0 ]] || { echo "record-cases: must run as root (the netns tests need it); or file an earlier run with --from DIR" >&2; exit 1; }
    from=$(mktemp -d /tmp/ribbridge-records.XXXXXX)
    echo "record-cases: recordings in $from" >&2
    mapfile -t tests < <(for c in "${wanted[@]}"; do row "$c" | field 2; done | sort -u)
    for t in "${tests[@]}"; do
        log=$from/${t##*::}.log
        t0=$SECONDS
        if RIBBRIDGE_KEEP_RECORDS=$from cargo test --locked --test netns -- \
            --test-threads=1 --exact "$t" >"$log" 2>&1 \
            && ! grep -q "differ from the daemon's log" "$log"; then
            echo "record-cases: $t: ok ($((SECONDS - t0)) s)" >&2
        else
            echo "record-cases: $t: FAILED ($((SECONDS - t0)) s), its cases are not filed; see $log" >&2
            failed+=("$t")
        fi
    done
fi

filed=0
for c in "${wanted[@]}"; do
    test=$(row "$c" | field 2)
    daemon=$(row "$c" | field 3)
    about=$(row "$c" | field 4)
    if printf '%s\n' "${failed[@]}" | grep -qxF "$test"; then
        continue
    fi
    src=$from/${test##*::}/$daemon
    for ext in jsonl config.json case.json; do
        [[ -f $src.$ext ]] || { echo "record-cases: $c: no $src.$ext" >&2; exit 1; }
    done
    dst=tests/data/reconcile/$c
    mkdir -p "$dst"
    cp "$src.jsonl" "$dst/events.jsonl"
    cp "$src.config.json" "$dst/config.json"
    # case.json as the daemon's fixture wrote it, with the case's description first.
    about_json=$(printf '%s' "$about" | sed 's/\\/\\\\/g; s/"/\\"/g')
    { echo "{"; echo "  \"about\": \"$about_json\","; tail -n +2 "$src.case.json"; } >"$dst/case.json"
    rm -f "$dst/expected.json"
    filed=$((filed + 1))
done
echo "record-cases: filed $filed case(s) under tests/data/reconcile/; blessing" >&2
RIBBRIDGE_BLESS=1 cargo test --locked --test reconcile_cases >&2
cargo test --locked --test reconcile_cases >&2
if [[ ${#failed[@]} -gt 0 ]]; then
    echo "record-cases: failed: ${failed[*]}" >&2
    exit 1
fi
