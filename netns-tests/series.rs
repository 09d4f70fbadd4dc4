//! Per-VIP series follow the VIPs, on a real kernel beside FRR 10.7: with
//! `--max-detailed-vips 50`, 60 VIPs written without their address (each
//! first `withdrawn`: no state change ever publishes it) give exactly 50
//! of them every series, one state at 1, and count the other 10 in
//! `ribbridge_vips_without_series`; the 60 deleted and forgotten lose
//! their series and the count goes to 0; 5 VIPs written after that all
//! get theirs, in the slots the forgotten ones freed.
//!
//! `/metrics` is an external state with no event to await: it is polled,
//! bounded by [`LIMIT`].

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::support::daemon::Daemon;
use crate::support::{Lab, lab};

const LIMIT: Duration = Duration::from_secs(30);
const DETAIL: usize = 50;

/// `ip -batch` text for `n` routes of 10.78.`third`.0/24, from .1.
fn batch(verb: &str, third: u8, n: usize) -> String {
    (1..=n)
        .map(|i| format!("route {verb} 10.78.{third}.{i}/32 dev lo table 198 proto 248\n"))
        .collect()
}

fn ip_batch(text: &str) {
    lab(&[
        "exec",
        "rb-node1",
        "sh",
        "-c",
        &format!("printf '{text}' | ip -batch -"),
    ]);
}

/// For each VIP of 10.78.0.0/16 with `ribbridge_vip_state` series: the
/// states at 1.
fn states(metrics: &str) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for l in metrics.lines() {
        let Some(rest) = l.strip_prefix("ribbridge_vip_state{prefix=\"10.78.") else {
            continue;
        };
        let prefix = format!("10.78.{}", rest.split('"').next().unwrap_or(""));
        let entry = out.entry(prefix).or_default();
        if l.ends_with(" 1") {
            let state = l.split("state=\"").nth(1).unwrap_or("").split('"').next();
            entry.push(state.unwrap_or("").to_string());
        }
    }
    out
}

fn gauge(metrics: &str, name: &str) -> Option<f64> {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .and_then(|v| v.trim().parse().ok())
}

/// Poll `/metrics` until `ok` holds; the text it held on, and how long.
async fn until(d: &Daemon, what: &str, ok: impl Fn(&str) -> bool) -> (String, Duration) {
    let t = Instant::now();
    loop {
        let m = d.metrics().await;
        if ok(&m) {
            return (m, t.elapsed());
        }
        assert!(
            t.elapsed() < LIMIT,
            "{what}: not within {LIMIT:?}; /metrics:\n{m}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn series_follow_the_vips_through_the_detail_limit_frr_10_7() {
    let lab_guard = Lab::up("10.7", 2, &[]);
    let frr_dir = lab_guard.sockdir("rb-node1");
    let detail = DETAIL.to_string();
    let mut d = Daemon::spawn(
        "rb-node1",
        &frr_dir,
        // The address required, as shipped (the fixture's default is not):
        // a VIP written without it stays `withdrawn` whatever bgpd's policy
        // says of it once read, so its first state is its only one.
        &[
            "--mode",
            "observe",
            "--require-address",
            "true",
            "--max-detailed-vips",
            &detail,
            "--forget-after-secs",
            "1",
        ],
    );
    d.wait_log("zebra: subscribed", Duration::from_secs(15))
        .await;

    // 60 VIPs, each written without its address: first state withdrawn.
    ip_batch(&batch("add", 0, 60));
    let (m, t_add) = until(&d, "50 VIPs with series, 10 counted without", |m| {
        states(m).len() == DETAIL && gauge(m, "ribbridge_vips_without_series") == Some(10.0)
    })
    .await;
    let s = states(&m);
    for (prefix, on) in &s {
        assert_eq!(on.len(), 1, "{prefix}: one state at 1, not {on:?}");
        assert!(
            m.contains(&format!(
                "ribbridge_ecmp_nexthops_known{{prefix=\"{prefix}\",table=\"198\"}}"
            )),
            "{prefix}: no ECMP series"
        );
    }
    let withdrawn = s.values().filter(|on| on[0] == "withdrawn").count();
    // Written without their address, the node cannot serve them: every
    // one is `withdrawn`, its first state, published though no state
    // change ever was (not left `unknown` while the daemon is ready).
    assert_eq!(withdrawn, DETAIL, "{s:?}");
    eprintln!(
        "series: 60 VIPs written without their address: {} with series ({withdrawn} withdrawn), 10 without, in {t_add:?}",
        s.len()
    );

    // Deleted: forgotten after the retention, their series gone.
    ip_batch(&batch("del", 0, 60));
    let (m, t_forget) = until(&d, "the 60 forgotten and their series gone", |m| {
        gauge(m, "ribbridge_vips_forgotten_total") == Some(60.0)
            && states(m).is_empty()
            && gauge(m, "ribbridge_vips_without_series") == Some(0.0)
    })
    .await;
    assert!(
        !m.contains("prefix=\"10.78.0."),
        "a forgotten VIP's series stays:\n{m}"
    );
    eprintln!("series: the 60 deleted, forgotten with their series in {t_forget:?}");

    // Five more: every one gets its series in a freed slot.
    ip_batch(&batch("add", 1, 5));
    let (m, t_new) = until(&d, "the 5 new VIPs with series", |m| {
        states(m).len() == 5 && gauge(m, "ribbridge_vips_without_series") == Some(0.0)
    })
    .await;
    for (prefix, on) in states(&m) {
        assert!(prefix.starts_with("10.78.1."), "{prefix}");
        assert_eq!(on.len(), 1, "{prefix}: {on:?}");
    }
    eprintln!("series: 5 VIPs written after the forgetting all have series, in {t_new:?}");
    ip_batch(&batch("del", 1, 5));
    d.stop().await;
    drop(lab_guard);
}
