//! The picture as people read it: a table per VIP (aligned columns, as
//! `kubectl get` prints), and, for `--watch`, one timestamped line per
//! change between two pictures, so that a failover reads top to bottom.

use std::time::{Duration, UNIX_EPOCH};

use super::join::{NamedBy, NodeRow, Picture, RouterView, Scrape, VipPicture};
use crate::status::columns;

/// `-` for nothing.
fn or_dash(v: Option<&str>) -> String {
    v.unwrap_or("-").to_string()
}

/// Prometheus' evaluation time as RFC 3339 (seconds), or `-`.
pub fn when(time: Option<f64>) -> String {
    time.filter(|t| t.is_finite() && *t >= 0.0).map_or_else(
        || "-".to_string(),
        |t| humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_secs_f64(t)).to_string(),
    )
}

/// A router's count in words: `2 paths (1 stale)`, `unknown`.
fn router_words(r: &RouterView) -> String {
    match (r.paths, r.stale_paths) {
        (None, _) => "unknown".into(),
        (Some(p), Some(s)) if s > 0.0 => format!("{p:.0} ({s:.0} stale)"),
        (Some(p), _) => format!("{p:.0}"),
    }
}

/// The STATE column: the state; `-` for a node not scraped (its SCRAPED
/// column says so) or without a series of the VIP.
fn state_cell(r: &NodeRow) -> String {
    match (&r.scrape, &r.state) {
        (Scrape::Fresh, Some(s)) => s.clone(),
        _ => "-".into(),
    }
}

/// What a change line calls a row's state: its state, or `not scraped`.
fn state_word(r: &NodeRow) -> String {
    match r.scrape {
        Scrape::Fresh => state_cell(r),
        _ => "not scraped".into(),
    }
}

fn drained_cell(d: Option<bool>) -> String {
    match d {
        Some(true) => "yes".into(),
        Some(false) => "no".into(),
        None => "-".into(),
    }
}

/// One VIP's block: its header line, its routers, its node rows, its
/// problems.
fn vip_block(v: &VipPicture) -> String {
    let mut out = format!("VIP {}  nodes advertising {}", v.prefix, v.advertising);
    if v.routers.is_empty() {
        out += "  router: no BMP station or router vantage in Prometheus";
    }
    out += "\n";
    if !v.routers.is_empty() {
        let rows: Vec<[String; 3]> = v
            .routers
            .iter()
            .map(|r| {
                [
                    r.router.clone(),
                    r.source.replace('_', " "),
                    router_words(r),
                ]
            })
            .collect();
        out += &indent(&columns(&["ROUTER", "SOURCE", "PATHS"], &rows));
    }
    if v.nodes.is_empty() {
        out += "  (no node has a series of this VIP)\n";
    }
    let rows: Vec<[String; 9]> = v
        .nodes
        .iter()
        .map(|r| {
            [
                r.node.clone(),
                r.scrape.word(),
                state_cell(r),
                or_dash(r.writer.as_deref()),
                or_dash(r.backend.as_deref()),
                or_dash(r.address.as_deref()),
                or_dash(r.heal.as_deref()),
                drained_cell(r.drained),
                or_dash(r.why.as_deref()),
            ]
        })
        .collect();
    if !rows.is_empty() {
        out += &indent(&columns(
            &[
                "NODE", "SCRAPED", "STATE", "WRITER", "BACKEND", "ADDRESS", "HEAL", "DRAINED",
                "WHY",
            ],
            &rows,
        ));
    }
    for p in &v.problems {
        out += &format!("  ! {}: {}\n", p.kind, p.what);
    }
    out
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}

/// The whole picture as a table: a header line (source, time, verdict,
/// how nodes are named), then a block per VIP.
pub fn table(source: &str, p: &Picture) -> String {
    let mut out = format!(
        "prometheus {source}  at {}  {}\n",
        when(p.time),
        p.verdict.word()
    );
    match p.named_by {
        NamedBy::Node => {}
        NamedBy::Instance => {
            out += "(no target has a `node` label: rows are named by `instance`; add a node \
                    label to the scrape config, docs/DEPLOY.md)\n";
        }
        NamedBy::Mixed => {
            out += "(some targets have no `node` label: those rows are named by `instance`)\n";
        }
    }
    for pr in &p.problems {
        out += &format!("! {}: {}\n", pr.kind, pr.what);
    }
    for v in &p.vips {
        out += &vip_block(v);
    }
    out
}

/// A node row's summary for change lines: what it is and why.
fn row_summary(r: &NodeRow) -> String {
    let mut s = state_word(r);
    if let Some(w) = &r.why {
        s += &format!(" ({w})");
    }
    if r.drained == Some(true) && r.state.as_deref() != Some("drained") {
        s += " [drained]";
    }
    s
}

/// The lines that say what changed from `old` to `new`, each starting
/// with `new`'s time: a VIP's nodes advertising, a router's paths, a
/// node's state or scrape, a problem of no VIP, the verdict.
pub fn changes(old: &Picture, new: &Picture) -> Vec<String> {
    let t = when(new.time);
    let mut out = Vec::new();
    let old_problems: Vec<&str> = old.problems.iter().map(|p| p.what.as_str()).collect();
    for p in &new.problems {
        if !old_problems.contains(&p.what.as_str()) {
            out.push(format!("{t}  {}: {}", p.kind, p.what));
        }
    }
    for v in &new.vips {
        let Some(o) = old.vips.iter().find(|o| o.prefix == v.prefix) else {
            out.push(format!(
                "{t}  {}  appears: nodes advertising {}",
                v.prefix, v.advertising
            ));
            continue;
        };
        if o.advertising != v.advertising {
            out.push(format!(
                "{t}  {}  nodes advertising {} -> {}",
                v.prefix, o.advertising, v.advertising
            ));
        }
        for r in &v.routers {
            let before = o
                .routers
                .iter()
                .find(|x| x.router == r.router && x.source == r.source)
                .map_or_else(|| "none".to_string(), router_words);
            let now = router_words(r);
            if before != now {
                out.push(format!(
                    "{t}  {}  router {} paths {before} -> {now}",
                    v.prefix, r.router
                ));
            }
        }
        for r in &o.routers {
            if !v.routers.iter().any(|x| x.router == r.router) {
                out.push(format!("{t}  {}  router {} gone", v.prefix, r.router));
            }
        }
        for r in &v.nodes {
            let now = row_summary(r);
            let before = o
                .nodes
                .iter()
                .find(|x| x.instance == r.instance)
                .map_or_else(|| "-".to_string(), row_summary);
            if before != now {
                out.push(format!(
                    "{t}  {}  {}: {} -> {now}",
                    v.prefix,
                    r.node,
                    before.split(" (").next().unwrap_or("-")
                ));
            }
        }
        for r in &o.nodes {
            if !v.nodes.iter().any(|x| x.instance == r.instance) {
                out.push(format!(
                    "{t}  {}  {}: {} -> - (no series of the VIP)",
                    v.prefix,
                    r.node,
                    state_word(r)
                ));
            }
        }
    }
    for o in &old.vips {
        if !new.vips.iter().any(|v| v.prefix == o.prefix) {
            out.push(format!("{t}  {}  gone from every view", o.prefix));
        }
    }
    if old.verdict != new.verdict {
        out.push(format!(
            "{t}  verdict {} -> {}",
            old.verdict.word(),
            new.verdict.word()
        ));
    }
    out
}
