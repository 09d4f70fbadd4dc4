//! `ribbridge status`: the per-VIP join table, from a running daemon or
//! built once without one.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use super::Exit;
use crate::config::{Layer, Settings};
use crate::model::TableId;
use crate::status::StatusDoc;

/// `ribbridge status` flags.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: 0 every VIP advertised or withdrawn, 1 a VIP in drift, 2 error \
(daemon unreachable or not ready, FRR unreadable, bad flags)."
)]
pub struct Args {
    /// A running daemon's HTTP endpoint: `http://HOST:PORT` or `HOST:PORT`.
    #[arg(long, default_value = crate::http::DEFAULT_ENDPOINT, conflicts_with = "oneshot")]
    endpoint: String,
    /// Build the join once, without a daemon.
    #[arg(long)]
    oneshot: bool,
    /// Directory holding zserv.api, zebra.vty and bgpd.vty [default: /var/run/frr].
    #[arg(long, value_name = "DIR", requires = "oneshot")]
    frr_dir: Option<PathBuf>,
    /// Kernel routing table (repeatable) [default: 198].
    #[arg(long = "table", value_name = "ID", requires = "oneshot")]
    tables: Vec<TableId>,
    /// Print the /status JSON document instead of a table.
    #[arg(long)]
    json: bool,
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
    let doc = if args.oneshot {
        let flags = Layer {
            frr_dir: args.frr_dir.clone(),
            tables: (!args.tables.is_empty()).then(|| args.tables.clone()),
            ..Layer::default()
        };
        let settings = match Settings::resolve(None, flags) {
            Ok(s) => s,
            Err(e) => return super::fail_err(CMD, &e),
        };
        match rt.block_on(crate::daemon::oneshot(&settings)) {
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
