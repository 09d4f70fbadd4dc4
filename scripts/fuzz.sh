#!/usr/bin/env bash
# Bounded fuzz runs of every cargo-fuzz target in fuzz/ (the ZAPI and vty
# decoders, the vty JSON types, the kernel's netlink and nexthop-object
# decoders, the configuration file, the peer mapping, the BMP station's
# codec, decoder and view, its BGP UPDATE decoder alone, bgpd's configuration read as an intent and
# its policy evaluated).
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET]     default 20 (FUZZ_SECS overrides)
#
# cargo-fuzz needs nightly flags; RUSTC_BOOTSTRAP=1 lets the stable toolchain
# accept them. Installs cargo-fuzz when missing. Seeds come from the captured
# FRR and kernel data under tests/; the corpus grows in fuzz/corpus (ignored
# by git). A crash fails the script and leaves its input in fuzz/artifacts.
set -euo pipefail
cd "$(dirname "$0")/.."

secs=${1:-${FUZZ_SECS:-20}}
export RUSTC_BOOTSTRAP=1
command -v cargo-fuzz >/dev/null || cargo install --locked cargo-fuzz

seed() { # TARGET FILES...
    local t=$1; shift
    mkdir -p "fuzz/corpus/$t"
    local f dest
    for f in "$@"; do
        dest=fuzz/corpus/$t/seed-$(basename "$(dirname "$f")")-$(basename "$f")
        [[ -f $f && ! -e $dest ]] || continue
        cp "$f" "$dest"
    done
    return 0
}
seed zapi_decode
seed vty_decode tests/data/frr/*/vty-*.bin
seed vty_json tests/data/frr/*/vty-*.bin
seed netlink_decode tests/data/kernel/*.bin
seed config_parse fuzz/seeds/config_parse/*
seed peer_mapping tests/render/*.json
seed bmp_decode tests/data/bmp/*/session*.bin
seed bmp_update fuzz/seeds/bmp_update/*
seed bmp_station fuzz/seeds/bmp_station/*
seed intent_eval tests/data/frr/*/*running-config*

targets=$(cd fuzz && cargo fuzz list)
# No sanitizer: ribbridge forbids unsafe code, so ASan would guard only the
# dependencies' unsafe code at the price of minutes of build time on every
# fresh machine; what these targets hunt is panics and wrong decodes.
(cd fuzz && cargo fuzz build -O -s none)
summary=()
for t in $targets; do
    log=$(mktemp)
    if ! (cd fuzz && cargo fuzz run -O -s none "$t" "corpus/$t" -- -max_total_time="$secs" -print_final_stats=1 -max_len=65536) >"$log" 2>&1; then
        tail -40 "$log" >&2
        echo "fuzz.sh: $t crashed; the input is in fuzz/artifacts/$t" >&2
        exit 1
    fi
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*')
    summary+=("$t: ${execs:-?} executions in ${secs} s, coverage ${cov:-?} edges, no crash")
    rm -f "$log"
done
printf 'fuzz.sh: %s\n' "${summary[@]}"
