//! The lab itself: two nodes advertise the VIP and the router installs it
//! with two ECMP nexthops; withdrawing it on one node drops the router to one
//! nexthop, re-adding it brings the second back. Measured, then asserted
//! against a 5 s bound (the bound is a correctness limit, the
//! measured time is printed for the record, not asserted).

use std::net::IpAddr;
use std::time::Duration;

use crate::support::{Lab, RouteWatch, lab};

const VIP: &str = "192.0.2.10/32";
const BOUND: Duration = Duration::from_secs(5);
// Sessions and the first advertisement take longer than a change.
const SETTLE: Duration = Duration::from_secs(30);

async fn ecmp_follows_vip(frr: &'static str, vip: &str) {
    let lab_guard = Lab::up(frr, 2, &[vip]);
    let (addr, len) = vip.split_once('/').expect("prefix");
    let (addr, len): (IpAddr, u8) = (addr.parse().expect("addr"), len.parse().expect("len"));
    let mut router = RouteWatch::open("rb-router");

    lab(&["vip-add", "node1", vip]);
    lab(&["vip-add", "node2", vip]);
    let t = router
        .wait_nexthops(addr, len, 2, SETTLE)
        .await
        .expect("both adds reach the router");
    eprintln!("FRR {frr} {vip}: 2 nexthops {t:?} after both adds");

    lab(&["vip-del", "node1", vip]);
    let t = router
        .wait_nexthops(addr, len, 1, BOUND)
        .await
        .expect("the withdraw reaches the router");
    eprintln!("FRR {frr} {vip}: withdraw on node1 -> 1 nexthop in {t:?}");

    lab(&["vip-add", "node1", vip]);
    let t = router
        .wait_nexthops(addr, len, 2, BOUND)
        .await
        .expect("the re-add reaches the router");
    eprintln!("FRR {frr} {vip}: re-add on node1 -> 2 nexthops in {t:?}");
    drop(lab_guard);
}

#[tokio::test]
async fn ecmp_follows_vip_frr_8_4() {
    ecmp_follows_vip("8.4", VIP).await;
}

#[tokio::test]
async fn ecmp_follows_vip_frr_10_3() {
    ecmp_follows_vip("10.3", VIP).await;
}

#[tokio::test]
async fn ecmp_follows_vip_frr_10_7() {
    ecmp_follows_vip("10.7", VIP).await;
}

#[tokio::test]
async fn ecmp_follows_ipv6_vip_frr_10_7() {
    ecmp_follows_vip("10.7", "2001:db8::10/128").await;
}
