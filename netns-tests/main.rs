//! Netns tests: real kernel, real FRR (8.4, 10.3, 10.7) and GoBGP 3.10
//! (gobgp.rs, scripts/lab-gobgp.sh), one lab at a time.
//! Run as root with `cargo test --test netns -- --test-threads=1`
//! (`scripts/test.sh` does). See `support` for the fixtures.

// std's clocks: the labs run a real kernel and FRR in real time (and wait in
// blocking threads), which a paused tokio clock would not measure; the soak
// compares the wall clock with the daemon's log timestamps.
#![allow(clippy::disallowed_methods)]

mod support;

mod alerts;
mod bmp;
mod bridge;
mod cluster;
mod containerd;
mod cri;
mod day2;
mod descriptors;
mod differential;
mod drain;
mod faults;
mod first_hour;
mod frr_clients;
mod gobgp;
mod image;
mod intent;
mod kernel_mirror;
mod lab_ecmp;
mod log_stall;
mod privilege;
mod render;
mod series;
mod soak;
mod status_contract;
mod supervision;
mod upgrades;
mod verdicts;
mod writer;
