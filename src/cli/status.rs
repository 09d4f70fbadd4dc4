//! `ribbridge status`: the per-VIP join table, from a running daemon or
//! built once without one.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use super::{Exit, NODE_DEFAULTS, defaulted, words};
use crate::config::{Layer, Settings};
use crate::model::{Prefix, TableId};
use crate::status::StatusDoc;

/// `ribbridge status` flags.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: 0 every VIP advertised or withdrawn, 1 a VIP in drift, 2 error \
(daemon unreachable or not ready, FRR unreadable, bad flags; with --oneshot, a VIP whose \
class needs longer than --wait to be confirmed)."
)]
pub struct Args {
    /// A running daemon's HTTP endpoint: `http://HOST:PORT` or `HOST:PORT`.
    #[arg(long, default_value = crate::http::DEFAULT_ENDPOINT, conflicts_with = "oneshot")]
    endpoint: String,
    /// Build the join once, without a daemon.
    #[arg(long)]
    oneshot: bool,
    #[arg(long, value_name = "DIR", requires = "oneshot", help = defaulted(
        "Directory holding zserv.api, zebra.vty and bgpd.vty",
        NODE_DEFAULTS.frr_dir.display(),
    ))]
    frr_dir: Option<PathBuf>,
    #[arg(long = "table", value_name = "ID", requires = "oneshot", help = defaulted(
        "Kernel routing table (repeatable)",
        words(&[NODE_DEFAULTS.table]),
    ))]
    tables: Vec<TableId>,
    /// The daemon's TOML configuration file: a one-shot join judges with
    /// the daemon's settings (its VIPs, graces, address rule); flags
    /// override it.
    #[arg(long, value_name = "FILE", requires = "oneshot")]
    config: Option<PathBuf>,
    /// A prefix to treat as a VIP even when no table holds it (repeatable),
    /// as `ribbridge run --vip`.
    #[arg(long = "vip", value_name = "PREFIX", requires = "oneshot")]
    vips: Vec<crate::model::Prefix>,
    #[arg(long, value_name = "BOOL", requires = "oneshot", help = defaulted(
        "As `ribbridge run --require-address`",
        NODE_DEFAULTS.require_address,
    ))]
    require_address: Option<bool>,
    /// With --oneshot: how long to wait, at most, for what the views show
    /// to last the daemon's grace before it is reported (a VIP whose class
    /// needs longer is shown `unknown`, with what the views show and when
    /// it would be reported, and the exit status is 2).
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 10,
        requires = "oneshot"
    )]
    wait: u64,
    /// Print the /status JSON document instead of a table.
    #[arg(long)]
    json: bool,
    /// Ask the daemon again every --interval until interrupted: on a
    /// terminal the table is redrawn when it changes; into a pipe, a line
    /// per change of a VIP's state (with the time), so a failover reads top
    /// to bottom.
    #[arg(long, conflicts_with_all = ["oneshot", "json"])]
    watch: bool,
    /// With --watch: how often to ask, e.g. 2s.
    #[arg(long, value_name = "DURATION", default_value = "2s", requires = "watch", value_parser = super::drain::parse_timeout)]
    interval: Duration,
}

/// How long the daemon may take to answer.
const TIMEOUT: Duration = Duration::from_secs(5);

/// `ribbridge status`.
pub fn run(args: Args) -> ExitCode {
    const CMD: &str = "ribbridge status";
    let rt = match super::runtime(CMD) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    if args.watch {
        return rt.block_on(watch(&args.endpoint, args.interval));
    }
    let doc = if args.oneshot {
        let flags = Layer {
            frr_dir: args.frr_dir.clone(),
            tables: (!args.tables.is_empty()).then(|| args.tables.clone()),
            vips: (!args.vips.is_empty()).then(|| args.vips.clone()),
            require_address: args.require_address,
            ..Layer::default()
        };
        let file = match &args.config {
            Some(p) => match crate::config::load(p) {
                Ok(l) => Some((p.as_path(), l)),
                Err(e) => return super::fail_err(CMD, &e),
            },
            None => None,
        };
        let settings = match Settings::resolve(file, flags) {
            Ok(s) => s,
            Err(e) => return super::fail_err(CMD, &e),
        };
        match rt.block_on(crate::daemon::oneshot(
            &settings,
            Duration::from_secs(args.wait),
        )) {
            Ok(d) => d,
            Err(e) => return super::fail_err(CMD, &e),
        }
    } else {
        match rt.block_on(fetch(&args.endpoint)) {
            Ok(d) => d,
            Err(e) => return super::fail_err(CMD, &e),
        }
    };
    if args.json {
        match serde_json::to_string_pretty(&doc) {
            Ok(j) => println!("{j}"),
            Err(e) => return super::fail(CMD, &format!("cannot print the status as JSON: {e}")),
        }
    } else {
        print!("{}", crate::status::render_table(&doc));
    }
    // A blind daemon is never "fine": what it cannot see is unknown, and
    // a probe reading the exit code must not take that for success.
    if !doc.ready {
        let why = doc
            .not_ready
            .as_deref()
            .unwrap_or("its views are incomplete");
        return super::fail(
            CMD,
            &format!("the daemon is not ready ({why}): what it cannot see is shown as unknown"),
        );
    }
    // What a one-shot read could not wait for is not known yet.
    if let Some(v) = doc
        .vips
        .iter()
        .find(|v| v.pending.is_some() && v.state.class().is_none())
    {
        let p = v.pending.as_ref().map_or_else(String::new, |p| {
            format!(
                "{} since {}, reported at {} if it lasts",
                p.state.name(),
                p.since,
                p.due
            )
        });
        return super::fail(
            CMD,
            &format!(
                "{} shows {p}: longer than --wait {} s; run again later, or with a longer --wait",
                v.prefix, args.wait
            ),
        );
    }
    if doc.drifting() {
        ExitCode::from(Exit::Drift)
    } else {
        ExitCode::from(Exit::Ok)
    }
}

/// Why the running daemon's status could not be read.
#[derive(Debug, thiserror::Error)]
enum FetchError {
    /// The endpoint text, the connection or the HTTP answer.
    #[error(transparent)]
    Client(#[from] crate::http::client::ClientError),
    /// The endpoint text is not `HOST:PORT` or `http://HOST:PORT`.
    #[error("--endpoint: {0}")]
    Endpoint(#[from] crate::http::client::EndpointError),
    /// The answer is not a status document (another service on that port?).
    #[error("{address}/status is not a ribbridge status document: {source}")]
    Document {
        /// The endpoint.
        address: String,
        /// The parser's reason.
        source: serde_json::Error,
    },
}

/// GET `/status` from a running daemon.
async fn fetch(endpoint: &str) -> Result<StatusDoc, FetchError> {
    use crate::http::client;
    let address: client::Address = endpoint.parse()?;
    let body = client::get_ok(&address, "/status", TIMEOUT).await?;
    serde_json::from_slice(&body).map_err(|source| FetchError::Document {
        address: address.to_string(),
        source,
    })
}

/// `status --watch`: the daemon asked every `interval` until interrupted
/// (SIGINT/SIGTERM end the process); a terminal gets the table redrawn when
/// it changes, a pipe a line per change of a VIP's state. A failed ask is
/// said once per distinct error, and the watch goes on.
async fn watch(endpoint: &str, interval: Duration) -> ExitCode {
    use std::io::IsTerminal;
    let tty = std::io::stdout().is_terminal();
    let mut last: Option<StatusDoc> = None;
    let mut last_error = String::new();
    loop {
        match fetch(endpoint).await {
            Ok(doc) => {
                last_error.clear();
                let now = doc.generated.clone().unwrap_or_default();
                if tty {
                    if last.as_ref().is_none_or(|l| !same_picture(l, &doc)) {
                        // Clear the screen, home the cursor, then the table.
                        print!("\x1b[2J\x1b[H{now}\n{}", crate::status::render_table(&doc));
                    }
                } else {
                    for line in changes(last.as_ref(), &doc) {
                        println!("{now}  {line}");
                    }
                }
                last = Some(doc);
            }
            Err(e) => {
                let text = e.to_string();
                if text != last_error {
                    eprintln!("ribbridge status --watch: {text}; asking again every {interval:?}");
                    last_error = text;
                }
            }
        }
        tokio::time::sleep(interval).await;
    }
}

/// Two documents show the same picture: equal but for when they were made.
fn same_picture(a: &StatusDoc, b: &StatusDoc) -> bool {
    let strip = |d: &StatusDoc| StatusDoc {
        generated: None,
        ..d.clone()
    };
    strip(a) == strip(b)
}

/// The changes from `before` to `now` a line each: readiness, and each
/// VIP's state (a VIP that appeared or went too).
fn changes(before: Option<&StatusDoc>, now: &StatusDoc) -> Vec<String> {
    let mut out = Vec::new();
    let ready = |d: &StatusDoc| if d.ready { "ready" } else { "not ready" };
    if before.is_none_or(|b| b.ready != now.ready) {
        out.push(ready(now).to_string());
    }
    let states = |d: &StatusDoc| -> std::collections::BTreeMap<(TableId, Prefix), String> {
        d.vips
            .iter()
            .map(|v| ((v.table, v.prefix), v.state.name().to_string()))
            .collect()
    };
    let was = before.map(states).unwrap_or_default();
    let is = states(now);
    for (key, state) in &is {
        match was.get(key) {
            Some(old) if old == state => {}
            Some(old) => out.push(format!("{} table {}: {old} -> {state}", key.1, key.0)),
            None => out.push(format!("{} table {}: {state}", key.1, key.0)),
        }
    }
    for key in was.keys().filter(|k| !is.contains_key(k)) {
        out.push(format!("{} table {}: gone", key.1, key.0));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(states: &[(&str, &str)]) -> StatusDoc {
        let mut d = crate::status::station_document(Vec::new(), None);
        d.vips = states
            .iter()
            .map(|(p, c)| {
                serde_json::from_value(serde_json::json!({
                    "prefix": p, "table": 198, "state": c, "kernel": true,
                    "zebra": true, "peers": [], "ecmp_nexthops": 1, "since": "-",
                    "heal": {"attempts": 0, "last_action": null, "last_result": null},
                }))
                .expect("a VIP's status")
            })
            .collect();
        d
    }

    #[test]
    fn a_watch_into_a_pipe_says_each_change_once() {
        let a = doc(&[("192.0.2.10/32", "advertised")]);
        assert_eq!(
            changes(None, &a),
            ["ready", "192.0.2.10/32 table 198: advertised"]
        );
        assert!(changes(Some(&a), &a).is_empty());
        let b = doc(&[
            ("192.0.2.10/32", "blackhole"),
            ("192.0.2.11/32", "advertised"),
        ]);
        assert_eq!(
            changes(Some(&a), &b),
            [
                "192.0.2.10/32 table 198: advertised -> blackhole",
                "192.0.2.11/32 table 198: advertised"
            ]
        );
        assert_eq!(
            changes(Some(&b), &a),
            [
                "192.0.2.10/32 table 198: blackhole -> advertised",
                "192.0.2.11/32 table 198: gone"
            ]
        );
        let mut later = a.clone();
        later.generated = Some("later".to_string());
        assert!(same_picture(&a, &later), "only the time differs");
    }
}
