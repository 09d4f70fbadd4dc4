//! `ribbridge frr`: what the ZAPI and vty clients see of FRR (debugging).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use super::Exit;
use crate::frr::{Report, ReportInput, TableMode};

/// `ribbridge frr` flags.
#[derive(Debug, clap::Args)]
#[command(after_help = "Exit status: 0 printed, 2 error (FRR unreachable or unreadable).")]
pub struct Args {
    /// Directory holding zserv.api, zebra.vty and bgpd.vty.
    #[arg(long, value_name = "DIR")]
    frr_dir: PathBuf,
    /// The kernel table FRR redistributes.
    #[arg(long, value_name = "ID", default_value_t = 198)]
    table: u16,
    /// How bgpd is fed the table: table-direct or import-table; read from
    /// bgpd's running config when absent.
    #[arg(long, value_name = "table-direct|import-table")]
    table_mode: Option<TableMode>,
    /// How long to wait for zebra's ZAPI dump, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    timeout_secs: u64,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// `ribbridge frr`.
pub fn run(args: Args) -> ExitCode {
    const CMD: &str = "ribbridge frr";
    let rt = match super::runtime(CMD) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    let input = ReportInput {
        frr_dir: args.frr_dir,
        table: args.table,
        table_mode: args.table_mode,
        timeout: Duration::from_secs(args.timeout_secs),
    };
    let report = match rt.block_on(crate::frr::report(&input)) {
        Ok(r) => r,
        Err(e) => return super::fail_err(CMD, &e),
    };
    if args.json {
        match serde_json::to_string_pretty(&report) {
            Ok(s) => println!("{s}"),
            Err(e) => return super::fail(CMD, &format!("cannot print JSON: {e}")),
        }
    } else {
        print!("{}", text(&report));
    }
    ExitCode::from(Exit::Ok)
}

fn text(r: &Report) -> String {
    let mut out = format!("FRR {} ({:?}, table {})\n", r.release, r.mode, r.table);
    out += &format!("ZAPI routes ({}):\n", r.zapi_routes.len());
    for z in &r.zapi_routes {
        let nhs: Vec<String> = z
            .nexthops
            .iter()
            .map(|n| {
                let mut s = match n.gateway.addr() {
                    Some(a) => format!("via {a}"),
                    None => format!("{:?}", n.gateway),
                };
                if let Some(w) = n.weight {
                    s.push_str(&format!(" weight {w}"));
                }
                s
            })
            .collect();
        out += &format!(
            "  {} type {} inst {} distance {:?} metric {:?}: {}\n",
            z.prefix,
            z.route_type,
            z.instance,
            z.distance,
            z.metric,
            nhs.join(", ")
        );
    }
    for (afi, t) in &r.zebra_table {
        out += &format!("zebra table {} {afi:?} ({} prefixes):\n", r.table, t.len());
        for (p, entries) in t {
            for e in entries {
                out += &format!(
                    "  {p} {} selected={} installed={} nexthops={}\n",
                    e.protocol,
                    e.selected,
                    e.installed,
                    e.nexthops.len()
                );
            }
        }
    }
    for (afi, peers) in &r.bgp {
        out += &format!("BGP {afi:?} sessions ({}):\n", peers.len());
        for (name, p) in peers {
            let adv = match (&p.advertised, &p.error) {
                (Some(a), _) => a
                    .iter()
                    .map(|p| p.to_string())
                    .collect::<Vec<_>>()
                    .join(" "),
                (None, Some(e)) => format!("(error: {e})"),
                (None, None) => "-".into(),
            };
            out += &format!("  {name} {}: advertised {adv}\n", p.state);
        }
    }
    out
}
