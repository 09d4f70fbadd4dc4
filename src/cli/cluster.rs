//! `ribbridge cluster`: which nodes serve each VIP, and which do not and
//! why, from Prometheus (every node's ribbridge and the router's view,
//! as scraped), once or as a watch.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use super::Exit;
use super::drain::parse_timeout;
use crate::cluster::{self, Picture, Scope, Source, SourceOptions, Verdict, join, render};

/// The shipped ServiceMonitor's scrape interval
/// (deploy/openshift/monitoring.yaml).
const SCRAPE_INTERVAL: &str = "30s";

/// The exit codes, as `--help` ends with them.
const EXIT_STATUS: &str = "Exit status: 0 every node's state consistent and every router holding \
as many paths as nodes advertise, 1 a drift or a disagreement, 2 cannot tell (Prometheus \
unreachable or refusing, no data, a node not scraped or stale, a router's or a station's view \
missing; bad flags). With --watch: the last picture's, once interrupted.";

/// `ribbridge cluster` flags.
#[derive(Debug, clap::Args)]
#[command(
    after_help = EXIT_STATUS,
    after_long_help = format!("Examples:\n  ribbridge cluster --prometheus http://prometheus:9090\n  \
ribbridge cluster --prometheus https://thanos-querier.openshift-monitoring.svc:9091 \\\n    \
--token-file /var/run/secrets/kubernetes.io/serviceaccount/token \\\n    \
--ca-file /var/run/secrets/kubernetes.io/serviceaccount/service-ca.crt --vip 192.0.2.10/32 --watch\n  \
ribbridge cluster --explain   # the PromQL, to paste into the console\n\n{EXIT_STATUS}")
)]
pub struct Args {
    /// Prometheus' (or the Thanos querier's) base URL:
    /// `http[s]://HOST[:PORT][/PREFIX]`; ribbridge adds `/api/v1/query`.
    #[arg(long, value_name = "URL", required_unless_present = "explain")]
    prometheus: Option<String>,
    /// Only this VIP (repeatable); every VIP any node or router reports
    /// when absent.
    #[arg(long = "vip", value_name = "PREFIX")]
    vips: Vec<crate::model::Prefix>,
    /// The scrape job of every node's ribbridge, as the rules expect it.
    #[arg(long, value_name = "JOB", default_value = "ribbridge-monitor")]
    job: String,
    /// The scrape job of a router-vantage ribbridge (used where no BMP
    /// station reports the VIP).
    #[arg(long, value_name = "JOB", default_value = "ribbridge-router")]
    router_job: String,
    /// The scrape job of a BMP station (the shipped ServiceMonitor's): a
    /// station whose target is down leaves the router's view missing.
    #[arg(long, value_name = "JOB", default_value = "ribbridge-bmp")]
    bmp_job: String,
    /// How often Prometheus scrapes the nodes: a node last scraped more
    /// than two of these ago is shown stale, never fine.
    #[arg(long, value_name = "DURATION", default_value = SCRAPE_INTERVAL, value_parser = parse_timeout)]
    scrape_interval: Duration,
    /// A bearer token in a file (sent as `Authorization: Bearer`): the
    /// Thanos querier's, e.g. `oc whoami -t > FILE` or a service account's.
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// The CA certificates (PEM) that sign an https server's certificate.
    #[arg(long, value_name = "FILE")]
    ca_file: Option<PathBuf>,
    /// Do not check an https server's certificate (as `curl -k`).
    #[arg(long)]
    insecure_skip_tls_verify: bool,
    /// How long one query may take.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_timeout)]
    timeout: Duration,
    /// Print the picture as JSON (with --watch: one line per change).
    #[arg(long)]
    json: bool,
    /// Ask again every --interval and print a line per change, with the
    /// time, until interrupted.
    #[arg(long)]
    watch: bool,
    /// With --watch: how often to ask [default: the scrape interval].
    #[arg(long, value_name = "DURATION", requires = "watch", value_parser = parse_timeout)]
    interval: Option<Duration>,
    /// Print the PromQL queries (to paste into a console) and exit.
    #[arg(long)]
    explain: bool,
}

const CMD: &str = "ribbridge cluster";

/// The exit code of a verdict.
fn exit_of(v: Verdict) -> ExitCode {
    match v {
        Verdict::Ok => Exit::Ok,
        Verdict::Drift => Exit::Drift,
        Verdict::Unknown => Exit::Error,
    }
    .into()
}

/// `ribbridge cluster`.
pub fn run(args: Args) -> ExitCode {
    let scope = Scope {
        job: args.job.clone(),
        router_job: args.router_job.clone(),
        bmp_job: args.bmp_job.clone(),
        scrape_interval: args.scrape_interval,
        vips: args.vips.iter().map(ToString::to_string).collect(),
    };
    if args.explain {
        return explain(&scope);
    }
    let source = match Source::new(&SourceOptions {
        url: args.prometheus.clone().unwrap_or_default(),
        token_file: args.token_file.clone(),
        ca_file: args.ca_file.clone(),
        insecure: args.insecure_skip_tls_verify,
        timeout: args.timeout,
    }) {
        Ok(s) => s,
        Err(e) => return super::fail_err(CMD, &e),
    };
    let rt = match super::runtime(CMD) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    if args.watch {
        let every = args.interval.unwrap_or(args.scrape_interval);
        return rt.block_on(watch(&source, &scope, every, args.json));
    }
    let picture = match rt.block_on(cluster::look(&source, &scope)) {
        Ok(p) => p,
        Err(e) => return super::fail_err(CMD, &e),
    };
    let json = if args.json { Json::Pretty } else { Json::No };
    if let Err(code) = print_picture(&source, &picture, json) {
        return code;
    }
    exit_of(picture.verdict)
}

fn explain(scope: &Scope) -> ExitCode {
    let mut out = String::new();
    for q in join::queries(scope) {
        out += &format!("# {}\n{}\n", q.what, q.promql);
    }
    if !scope.vips.is_empty() {
        out += &format!(
            "# the answers are then narrowed to prefix {}\n",
            scope.vips.join(", ")
        );
    }
    out += "# the cluster view's recording rules, for comparison:\n\
            # prefix:ribbridge_vip_nodes_advertising:sum, prefix:ribbridge_router_paths:max, \
            prefix:ribbridge_vip_paths_missing_at_router:sub\n";
    super::print_bytes(CMD, out.as_bytes())
}

/// The picture as a table, or as one JSON document (pretty) or line.
fn picture_text(source: &Source, p: &Picture, json: Json) -> Result<String, ExitCode> {
    let text = match json {
        Json::No => return Ok(render::table(&source.url(), p)),
        Json::Pretty => serde_json::to_string_pretty(p),
        Json::Line => serde_json::to_string(p),
    };
    text.map(|t| t + "\n")
        .map_err(|e| super::fail(CMD, &format!("cannot print the picture as JSON: {e}")))
}

/// How a picture is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Json {
    /// A table.
    No,
    /// One JSON document, indented.
    Pretty,
    /// One JSON document on one line (`--watch --json`).
    Line,
}

/// Print and flush (a watch is read as it goes, often through a pipe); a
/// closed standard output ends the command.
fn print(text: &str) -> Result<(), ExitCode> {
    let code = super::print_bytes(CMD, text.as_bytes());
    if code == ExitCode::from(Exit::Ok) {
        Ok(())
    } else {
        Err(code)
    }
}

fn print_picture(source: &Source, p: &Picture, json: Json) -> Result<(), ExitCode> {
    print(&picture_text(source, p, json)?)
}

/// Ask every `every`, print the first picture whole and then a line per
/// change; a failed poll is one line (once per distinct error) and the
/// watch goes on. Ends on Ctrl-C or SIGTERM with the last verdict's code.
async fn watch(source: &Source, scope: &Scope, every: Duration, json: bool) -> ExitCode {
    let mut last: Option<Picture> = None;
    let mut last_error: Option<String> = None;
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(s) => s,
        Err(e) => return super::fail(CMD, &format!("cannot watch for SIGTERM: {e}")),
    };
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = tokio::signal::ctrl_c() => break,
            _ = term.recv() => break,
        }
        let printed = match cluster::look(source, scope).await {
            Err(e) => {
                let text = e.to_string();
                if last_error.as_deref() != Some(&text) {
                    let now = render::when(Some(
                        crate::clock::wall()
                            .duration_since(std::time::UNIX_EPOCH)
                            .map_or(0.0, |d| d.as_secs_f64()),
                    ));
                    eprintln!("{now}  {CMD}: {text}");
                    last_error = Some(text);
                }
                Ok(())
            }
            Ok(p) => {
                last_error = None;
                let out = match (&last, json) {
                    (None, false) => print_picture(source, &p, Json::No),
                    (None, true) => print_picture(source, &p, Json::Line),
                    (Some(old), true) if !render::changes(old, &p).is_empty() => {
                        print_picture(source, &p, Json::Line)
                    }
                    (Some(_), true) => Ok(()),
                    (Some(old), false) => render::changes(old, &p)
                        .iter()
                        .try_for_each(|l| print(&format!("{l}\n"))),
                };
                last = Some(p);
                out
            }
        };
        if let Err(code) = printed {
            return code;
        }
    }
    last.map_or_else(|| Exit::Error.into(), |p| exit_of(p.verdict))
}
