//! `ribbridge status`: the per-VIP join table, from a running daemon or
//! built once without one.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use crate::config::{Layer, Settings};
use crate::model::TableId;
use crate::status::StatusDoc;

/// `ribbridge status` flags.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: 0 every VIP advertised or withdrawn, 1 a VIP in drift, 2 error \
(daemon unreachable, FRR unreadable, bad flags)."
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
        let rt = match super::runtime(CMD) {
            Ok(rt) => rt,
            Err(code) => return code,
        };
        match rt.block_on(crate::daemon::oneshot(&settings)) {
            Ok(d) => d,
            Err(e) => return super::fail_err(CMD, &e),
        }
    } else {
        match fetch(&args.endpoint) {
            Ok(d) => d,
            Err(e) => return super::fail(CMD, &e),
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
    if doc.drifting() {
        ExitCode::from(super::EXIT_DRIFT)
    } else {
        ExitCode::SUCCESS
    }
}

/// GET `/status` from a running daemon (replaced by the hyper client).
fn fetch(endpoint: &str) -> Result<StatusDoc, String> {
    use std::io::{Read, Write};
    use std::net::{TcpStream, ToSocketAddrs};
    let hostport = endpoint
        .strip_prefix("http://")
        .unwrap_or(endpoint)
        .trim_end_matches('/');
    let addr = hostport
        .to_socket_addrs()
        .map_err(|e| format!("endpoint '{endpoint}': {e}"))?
        .next()
        .ok_or_else(|| format!("endpoint '{endpoint}' resolves to no address"))?;
    let mut s = TcpStream::connect_timeout(&addr, TIMEOUT).map_err(|e| {
        format!("cannot reach ribbridge at {endpoint}: {e} (is `ribbridge run` running? or use --oneshot)")
    })?;
    s.set_read_timeout(Some(TIMEOUT))
        .map_err(|e| e.to_string())?;
    write!(
        s,
        "GET /status HTTP/1.1\r\nHost: {hostport}\r\nConnection: close\r\n\r\n"
    )
    .map_err(|e| format!("{endpoint}: {e}"))?;
    let mut body = Vec::new();
    s.take(16 << 20)
        .read_to_end(&mut body)
        .map_err(|e| format!("reading from {endpoint}: {e}"))?;
    let text = String::from_utf8_lossy(&body);
    let (head, json) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| format!("{endpoint} answered something that is not HTTP"))?;
    if !head.starts_with("HTTP/1.1 200") {
        return Err(format!(
            "{endpoint}/status answered '{}'",
            head.lines().next().unwrap_or("")
        ));
    }
    serde_json::from_str(json)
        .map_err(|e| format!("{endpoint}/status is not a status document: {e}"))
}
