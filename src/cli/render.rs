//! `ribbridge render`: flags, printing and exit codes around
//! [`crate::render`], which does the work and prints nothing.
//!
//! Exit codes: 0 written (or printed), 3 ([`Exit::Unchanged`]) the file already
//! held exactly this text and was not touched, 2 ([`Exit::Error`]) an error
//! (nothing written). The render's notes (which peers, which router id,
//! warnings) go to standard error, the configuration to standard output
//! unless `--out` names a file. A drain recorded in `--drain-state` (see
//! [`crate::drain::state`]; an absent file: not drained) renders the
//! drain's deny entry into each VIP route-map.

use std::net::IpAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use super::Exit;
use crate::drain::DrainState;
use crate::model::TableMode;
use crate::render::{self, Discovery, MappingSource, RenderInput, output};

#[derive(Debug, clap::Args)]
#[command(after_help = exit_status_help())]
pub struct Args {
    /// The FRRPeerMapping JSON (or the installer's ConfigMap form, with
    /// apiVIPs and ingressVIPs).
    #[arg(long, value_name = "FILE")]
    pub peers: PathBuf,
    /// A minijinja template to render instead of the built-in one; it gets
    /// the same context (see the render module's documentation).
    #[arg(long, value_name = "FILE")]
    pub template: Option<PathBuf>,
    /// This node's hostname (default: $RUNTIMECFG_HOSTNAME_PATH's contents,
    /// else the system's); only the part before the first dot is used.
    #[arg(long, value_name = "NAME")]
    pub hostname: Option<String>,
    /// The BGP router id (default: /run/nodeip-configuration/ipv4, or ipv6
    /// for IPv6-only peers, else the first global address).
    #[arg(long, value_name = "IP")]
    pub router_id: Option<IpAddr>,
    /// The FRR release to render for.
    #[arg(long, value_enum, default_value = "10")]
    pub frr_release: Release,
    /// Write the configuration here (atomically, mode 0640, only when it
    /// changes) instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Also validate the result with FRR's own parser (vtysh --dryrun).
    #[arg(long)]
    pub check: bool,
    /// The drain's intent file (`ribbridge drain` writes it): when it says
    /// drained, each VIP route-map keeps the drain's deny entry, so FRR
    /// started from this file stays drained. Absent: not drained.
    #[arg(long, value_name = "PATH", default_value = crate::config::DEFAULT_DRAIN_STATE)]
    pub drain_state: PathBuf,
}

/// `--frr-release`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Release {
    /// FRR 10.x: `redistribute table-direct`.
    #[value(name = "10")]
    Frr10,
    /// FRR 8.4: `ip import-table` + `redistribute table`, IPv4 only.
    #[value(name = "8.4")]
    Frr84,
}

impl From<Release> for TableMode {
    /// What each release renders: 8.4 has only import-table.
    fn from(r: Release) -> TableMode {
        match r {
            Release::Frr10 => TableMode::TableDirect,
            Release::Frr84 => TableMode::ImportTable,
        }
    }
}

/// The exit codes, as `--help` lists them.
fn exit_status_help() -> String {
    format!(
        "Exit status: 0 written or printed, {} error (nothing written), {} unchanged",
        Exit::Error.code(),
        Exit::Unchanged.code()
    )
}

/// `ribbridge render`.
pub fn run(args: Args) -> ExitCode {
    match execute(&args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("ribbridge render: {e}");
            ExitCode::from(Exit::Error)
        }
    }
}

/// Render, check and write as `args` say; print the notes.
fn execute(args: &Args) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let drained = DrainState::read(&args.drain_state)?.map(|s| {
        format!(
            "{} says so since {}",
            args.drain_state.display(),
            humantime::format_rfc3339_seconds(s.since)
        )
    });
    let input = RenderInput {
        mapping: MappingSource::File(args.peers.clone()),
        hostname: args.hostname.clone(),
        router_id: args.router_id,
        table_mode: args.frr_release.into(),
        template: args.template.clone(),
        discovery: Discovery::from_env(),
        drained,
    };
    let rendered = render::render(&input)?;
    for note in &rendered.notes {
        eprintln!("ribbridge render: {note}");
    }
    if args.check {
        let parser = render::check::check(&rendered.text)?;
        eprintln!("ribbridge render: `{parser}` accepts the configuration");
    }
    let Some(out) = &args.out else {
        print!("{}", rendered.text);
        return Ok(ExitCode::from(Exit::Ok));
    };
    match output::write_if_changed(out, &rendered.text)? {
        output::Written::Written => {
            eprintln!("ribbridge render: wrote {}", out.display());
            Ok(ExitCode::from(Exit::Ok))
        }
        output::Written::Unchanged => {
            eprintln!(
                "ribbridge render: {} is unchanged; not written",
                out.display()
            );
            Ok(ExitCode::from(Exit::Unchanged))
        }
    }
}
