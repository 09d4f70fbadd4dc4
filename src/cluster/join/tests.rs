//! The join on recorded API answers (tests/data/cluster/: one file per
//! scenario, each query's answer under its key, as Prometheus wrote it).

use super::*;
use crate::cluster::query::{Answer, parse_answer};
use crate::cluster::render;

const VIP: &str = "192.0.2.10/32";

fn scope() -> Scope {
    Scope {
        job: "ribbridge-monitor".into(),
        router_job: "ribbridge-router".into(),
        bmp_job: "ribbridge-bmp".into(),
        scrape_interval: Duration::from_secs(30),
        vips: Vec::new(),
    }
}

/// A scenario's answers, every query's through the API parser.
fn recorded(name: &str) -> Answers {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/cluster")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    let all: serde_json::Value = serde_json::from_str(&text).unwrap();
    queries(&scope())
        .into_iter()
        .map(|q| {
            // A query a recording lacks answered nothing.
            let Some(answer) = all.get(q.q.name()) else {
                return (q.q, Vec::new());
            };
            let body = serde_json::to_vec(answer).unwrap();
            let Answer::Samples(s) = parse_answer(&body).unwrap() else {
                panic!("{name}: {} refused", q.q.name())
            };
            (q.q, s)
        })
        .collect()
}

fn row<'a>(p: &'a Picture, node: &str) -> &'a NodeRow {
    p.vips[0]
        .nodes
        .iter()
        .find(|r| r.node == node)
        .unwrap_or_else(|| panic!("no row {node}: {p:#?}"))
}

#[test]
fn the_queries_are_the_list_of_every_query() {
    let listed: Vec<Q> = queries(&scope()).iter().map(|q| q.q).collect();
    assert_eq!(listed, Q::ALL);
}

#[test]
fn every_query_names_a_metric_of_the_catalogue() {
    use crate::telemetry as t;
    let known = [
        t::VIP_STATE,
        t::BACKEND_UP,
        t::DRAINED,
        t::VIPS_WITHDRAWN_BY_RIBBRIDGE,
        t::DRIFT_TOTAL,
        t::HEAL_GIVEN_UP_TOTAL,
        t::ROUTER_PATHS,
        t::ROUTER_STALE_PATHS,
        t::ECMP_NEXTHOPS,
    ];
    for q in queries(&scope()) {
        let names: Vec<&str> = q
            .promql
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| w.starts_with("ribbridge_"))
            .collect();
        assert!(
            names.iter().all(|n| known.contains(n)),
            "{}: {names:?}",
            q.promql
        );
        assert!(
            matches!(q.q, Q::Up | Q::UpTime | Q::VantageUp) || !names.is_empty(),
            "{}",
            q.promql
        );
    }
}

#[test]
fn all_advertising_and_the_router_agreeing_is_ok() {
    let p = join(&scope(), &recorded("all-advertising.json"));
    assert_eq!(p.verdict, Verdict::Ok, "{p:#?}");
    assert_eq!(p.named_by, NamedBy::Node);
    assert_eq!(p.vips.len(), 1);
    let v = &p.vips[0];
    assert_eq!((v.prefix.as_str(), v.advertising), (VIP, 3));
    assert_eq!(
        v.routers,
        vec![RouterView {
            source: "bmp",
            router: "127.0.0.1 (rb-router)".into(),
            paths: Some(3.0),
            stale_paths: Some(0.0),
        }]
    );
    let names: Vec<&str> = v.nodes.iter().map(|r| r.node.as_str()).collect();
    assert_eq!(names, ["node1", "node2", "node3"]);
    let r = row(&p, "node2");
    assert_eq!(
        (
            r.scrape,
            r.state.as_deref(),
            r.backend.as_deref(),
            r.drained,
            r.why.as_deref()
        ),
        (
            Scrape::Fresh,
            Some("advertised"),
            Some("up"),
            Some(false),
            None
        )
    );
    assert!(v.problems.is_empty(), "{:?}", v.problems);
    let table = render::table("http://p:9090", &p);
    assert!(table.contains(" ok\n"), "{table}");
}

#[test]
fn an_incident_names_each_node_and_the_router() {
    let p = join(&scope(), &recorded("incident.json"));
    // node3 not scraped: cannot tell, whatever else is found.
    assert_eq!(p.verdict, Verdict::Unknown, "{p:#?}");
    let v = &p.vips[0];
    // Only node1's BGP sends the VIP (a blackhole counts, as the rule).
    assert_eq!(v.advertising, 1);
    let n1 = row(&p, "node1");
    assert_eq!(
        (
            n1.state.as_deref(),
            n1.backend.as_deref(),
            n1.address.as_deref(),
            n1.heal.as_deref()
        ),
        (Some("blackhole"), Some("down"), None, Some("1 drift/5m"))
    );
    assert!(
        n1.why
            .as_deref()
            .unwrap_or("")
            .contains("health probe fails"),
        "{n1:?}"
    );
    let n2 = row(&p, "node2");
    assert_eq!(
        (n2.state.as_deref(), n2.drained),
        (Some("drained"), Some(true))
    );
    let n3 = row(&p, "node3");
    assert_eq!((n3.scrape, n3.state.as_deref()), (Scrape::Down, None));
    let kinds: Vec<(&str, &str)> = v
        .problems
        .iter()
        .map(|p| (p.kind, p.what.split(':').next().unwrap_or("")))
        .collect();
    assert!(kinds.contains(&("drift", "node1")), "{kinds:?}");
    assert!(kinds.contains(&("unknown", "node3")), "{kinds:?}");
    assert!(
        !kinds.iter().any(|(_, w)| *w == "node2"),
        "drained is no problem: {kinds:?}"
    );
    let router: Vec<&str> = v
        .problems
        .iter()
        .filter(|p| p.kind == "disagreement")
        .map(|p| p.what.as_str())
        .collect();
    assert_eq!(router.len(), 2, "{router:?}");
    assert!(router[0].contains("1 stale path"), "{router:?}");
    assert!(
        router[1].contains("holds 2 path(s), 1 node(s)"),
        "{router:?}"
    );
    let table = render::table("http://p:9090", &p);
    for want in ["not scraped", "blackhole", "drained", "unknown\n"] {
        assert!(table.contains(want), "{want} in:\n{table}");
    }
}

#[test]
fn without_the_unknown_node_a_drift_is_exit_1() {
    let mut a = recorded("incident.json");
    for list in a.values_mut() {
        list.retain(|s| s.label("node") != "node3");
    }
    let p = join(&scope(), &a);
    assert_eq!(p.verdict, Verdict::Drift, "{p:#?}");
}

#[test]
fn an_empty_answer_cannot_tell() {
    let p = join(&scope(), &recorded("empty.json"));
    assert_eq!(p.verdict, Verdict::Unknown);
    assert!(p.vips.is_empty());
    assert!(p.problems[0].what.contains("ribbridge-monitor"), "{p:?}");
    assert_eq!(p.time, None);
    // A VIP asked for by name, with no data: unknown too, and shown.
    let p = join(
        &Scope {
            vips: vec![VIP.into()],
            ..scope()
        },
        &recorded("empty.json"),
    );
    assert_eq!(p.verdict, Verdict::Unknown);
    assert_eq!(p.vips[0].problems[0].kind, "unknown");
}

#[test]
fn stale_series_are_never_fine_and_instance_names_the_rows() {
    let p = join(&scope(), &recorded("stale.json"));
    assert_eq!(p.verdict, Verdict::Unknown, "{p:#?}");
    assert_eq!(p.named_by, NamedBy::Instance);
    let v = &p.vips[0];
    assert_eq!(v.advertising, 0, "a stale advertised is not counted");
    for r in &v.nodes {
        assert!(matches!(r.scrape, Scrape::Stale { .. }), "{r:?}");
        assert_eq!(r.state, None, "{r:?}");
        assert!(r.node.ends_with(":7585"), "{r:?}");
    }
    assert_eq!(
        v.routers[0].paths, None,
        "the router's series are stale too"
    );
    let table = render::table("http://p:9090", &p);
    assert!(table.contains("named by `instance`"), "{table}");
    assert!(table.contains("stale (300s)"), "{table}");
}

#[test]
fn the_same_picture_twice_is_no_change_and_a_failover_reads_in_order() {
    let ok = join(&scope(), &recorded("all-advertising.json"));
    assert!(render::changes(&ok, &ok).is_empty());
    let bad = join(&scope(), &recorded("incident.json"));
    let lines = render::changes(&ok, &bad);
    let t = "2025-12-07T20:00:00Z";
    assert!(lines.iter().all(|l| l.starts_with(t)), "{lines:#?}");
    let want = [
        "nodes advertising 3 -> 1",
        "router 127.0.0.1 (rb-router) paths 3 -> 2 (1 stale)",
        "node1: advertised -> blackhole",
        "node2: advertised -> drained",
        "node3: advertised -> not scraped",
        "verdict ok -> unknown",
    ];
    for w in want {
        assert!(lines.iter().any(|l| l.contains(w)), "{w} in {lines:#?}");
    }
    // And back.
    let lines = render::changes(&bad, &ok);
    assert!(
        lines
            .iter()
            .any(|l| l.contains("node3: not scraped -> advertised")),
        "{lines:#?}"
    );
}

#[test]
fn a_vip_filter_keeps_only_that_vip() {
    let p = join(
        &Scope {
            vips: vec!["192.0.2.99/32".into()],
            ..scope()
        },
        &recorded("all-advertising.json"),
    );
    assert_eq!(p.vips.len(), 1);
    assert_eq!(p.vips[0].prefix, "192.0.2.99/32");
    assert!(p.vips[0].nodes.is_empty());
    assert_eq!(p.verdict, Verdict::Unknown);
}

#[test]
fn the_vips_asked_for_are_in_the_queries() {
    let one = queries(&Scope {
        vips: vec![VIP.into()],
        ..scope()
    });
    let state = one.iter().find(|q| q.q == Q::State).unwrap();
    assert_eq!(
        state.promql,
        "ribbridge_vip_state{job=\"ribbridge-monitor\",prefix=\"192.0.2.10/32\"} == 1"
    );
    let bmp = one.iter().find(|q| q.q == Q::RouterPaths).unwrap();
    assert_eq!(
        bmp.promql,
        "ribbridge_router_paths{prefix=\"192.0.2.10/32\"}"
    );
    let up = one.iter().find(|q| q.q == Q::Up).unwrap();
    assert_eq!(
        up.promql, "up{job=\"ribbridge-monitor\"}",
        "a node has no prefix"
    );
    let two = queries(&Scope {
        vips: vec![VIP.into(), "2001:db8::10/128".into()],
        ..scope()
    });
    let rv = two.iter().find(|q| q.q == Q::Vantage).unwrap();
    assert_eq!(
        rv.promql,
        "ribbridge_ecmp_nexthops{job=\"ribbridge-router\",prefix=~\"192\\\\.0\\\\.2\\\\.10/32|2001:db8::10/128\"}"
    );
    let every = queries(&scope());
    let bmp = every.iter().find(|q| q.q == Q::RouterStale).unwrap();
    assert_eq!(bmp.promql, "ribbridge_router_stale_paths");
}

#[test]
fn a_station_not_scraped_cannot_tell() {
    let mut a = recorded("all-advertising.json");
    let up = |v: f64| Sample {
        labels: [("instance", "127.0.0.1:7587"), ("job", "ribbridge-bmp")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        time: 1_765_137_600.0,
        value: v,
    };
    a.insert(Q::VantageUp, vec![up(1.0)]);
    assert_eq!(join(&scope(), &a).verdict, Verdict::Ok);
    // The station down: its series gone with it; never fine.
    a.insert(Q::VantageUp, vec![up(0.0)]);
    a.remove(&Q::RouterPaths);
    a.remove(&Q::RouterStale);
    let p = join(&scope(), &a);
    assert_eq!(p.verdict, Verdict::Unknown, "{p:#?}");
    assert!(
        p.problems[0].what.contains("127.0.0.1:7587"),
        "{:?}",
        p.problems
    );
}

/// Recorded from the lab's real Prometheus (netns-tests/cluster.rs with
/// RIBBRIDGE_RECORD_CLUSTER): node1 powered off under graceful restart,
/// the BMP station's router keeping its path as stale.
#[test]
fn a_recorded_power_off_under_graceful_restart_names_the_stale_path() {
    let p = join(
        &Scope {
            scrape_interval: Duration::from_secs(2),
            vips: vec![VIP.into()],
            ..scope()
        },
        &recorded("gr-power-off.json"),
    );
    assert_eq!(p.verdict, Verdict::Unknown, "{p:#?}");
    assert_eq!(p.named_by, NamedBy::Node);
    let v = &p.vips[0];
    assert_eq!(v.advertising, 1);
    assert_eq!(
        (v.routers[0].paths, v.routers[0].stale_paths),
        (Some(2.0), Some(1.0))
    );
    assert_eq!(row(&p, "node1").scrape, Scrape::Down);
    assert_eq!(row(&p, "node2").state.as_deref(), Some("advertised"));
    let named: Vec<&str> = v
        .problems
        .iter()
        .filter(|p| p.kind == "disagreement")
        .map(|p| p.what.as_str())
        .collect();
    assert!(
        named.iter().any(|w| w.contains("1 stale path")),
        "{named:?}"
    );
}

#[test]
fn with_no_vip_a_node_not_scraped_is_still_named() {
    let mut a = recorded("all-advertising.json");
    a.remove(&Q::State);
    a.remove(&Q::RouterPaths);
    for s in a.get_mut(&Q::Up).unwrap() {
        if s.label("node") == "node2" {
            s.value = 0.0;
        }
    }
    let p = join(&scope(), &a);
    assert_eq!(p.verdict, Verdict::Unknown);
    assert!(
        p.problems
            .iter()
            .any(|p| p.what.starts_with("node2: not scraped")),
        "{:?}",
        p.problems
    );
}
