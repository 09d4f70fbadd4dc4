//! `ribbridge render`: the node's frr.conf from the cluster's BGP peer
//! mapping (issue 6).
//!
//! Contract: every control-plane node gets the same mapping file; this
//! command picks the node's peers (its `hostOverrides` entry, else
//! `defaultPeers`), its router id, and renders the configuration the
//! enhancement specifies: BGP sessions (with port, password, BFD, timers,
//! ebgp-multihop, disable-connected-check) and the VIP advertisement from
//! table 198 through a route-map and prefix-list per address family, with
//! the communities set on what is sent. Exit codes: 0 written (or printed),
//! 3 unchanged (the file already held exactly this text and was not
//! touched), 2 error (nothing written). Pieces: [`mapping`] (schema and
//! validation), [`identity`] (hostname, router id), [`template`] (context,
//! built-in and user templates), [`check`] (FRR's parser), [`output`]
//! (atomic write).

pub mod check;
pub mod identity;
pub mod mapping;
pub mod output;
pub mod template;

use std::net::IpAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use mapping::Mapping;
use template::{Context, FrrRelease};

/// Exit code when the file already held the rendered text.
pub const EXIT_UNCHANGED: u8 = 3;

#[derive(Debug, clap::Args)]
pub struct RenderArgs {
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
    pub frr_release: FrrRelease,
    /// Write the configuration here (atomically, mode 0640, only when it
    /// changes) instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Also validate the result with FRR's own parser (vtysh --dryrun).
    #[arg(long)]
    pub check: bool,
}

/// What a successful render did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Printed to standard output.
    Printed,
    /// `--out` was written.
    Written,
    /// `--out` already held this text.
    Unchanged,
}

/// `ribbridge render`.
pub fn command(args: RenderArgs) -> ExitCode {
    match run(&args) {
        Ok(Outcome::Printed) => ExitCode::SUCCESS,
        Ok(Outcome::Written) => ExitCode::SUCCESS,
        Ok(Outcome::Unchanged) => ExitCode::from(EXIT_UNCHANGED),
        Err(e) => {
            eprintln!("ribbridge render: {e}");
            ExitCode::from(crate::cli::EXIT_ERROR)
        }
    }
}

/// Render, check and write as `args` say.
pub fn run(args: &RenderArgs) -> Result<Outcome, String> {
    let text = render(args)?;
    if args.check {
        let parser = check::check(&text)?;
        eprintln!("ribbridge render: `{parser}` accepts the configuration");
    }
    let Some(out) = &args.out else {
        print!("{text}");
        return Ok(Outcome::Printed);
    };
    match output::write_if_changed(out, &text)? {
        output::Written::Written => {
            eprintln!("ribbridge render: wrote {}", out.display());
            Ok(Outcome::Written)
        }
        output::Written::Unchanged => {
            eprintln!(
                "ribbridge render: {} is unchanged; not written",
                out.display()
            );
            Ok(Outcome::Unchanged)
        }
    }
}

/// The configuration text `args` describe.
pub fn render(args: &RenderArgs) -> Result<String, String> {
    let mapping = Mapping::load(&args.peers).map_err(|e| e.to_string())?;
    let hostname = identity::hostname(args.hostname.as_deref())?;
    let (peers, from) = mapping.peers_for(&hostname);
    let file = args.peers.display();
    if peers.is_empty() {
        return Err(format!(
            "{file}: no peers for host '{hostname}': hostOverrides has no entry '{hostname}' and \
             defaultPeers is empty; add defaultPeers or a hostOverrides entry for {hostname}"
        ));
    }
    let (has_v4, has_v6) = mapping::families(peers);
    let v6_vips = mapping.vips.iter().any(|p| !p.is_ipv4());
    if args.frr_release == FrrRelease::Frr84 && (v6_vips || !has_v4) {
        return Err(format!(
            "{file}: {} but FRR 8.4 cannot advertise IPv6 VIPs (it has no IPv6 import-table; \
             table-direct came with FRR 10): render for FRR 10 with --frr-release 10",
            if has_v4 {
                "the mapping lists IPv6 VIPs"
            } else {
                "every peer of this host is IPv6"
            }
        ));
    }
    for (v4, has) in [(true, has_v4), (false, has_v6)] {
        let orphans: Vec<String> = mapping
            .vips
            .iter()
            .filter(|p| p.is_ipv4() == v4)
            .map(|p| p.to_string())
            .collect();
        if !has && !orphans.is_empty() {
            eprintln!(
                "ribbridge render: warning: {file}: {from} of '{hostname}' has no IPv{} peer, so {} will not be advertised",
                if v4 { 4 } else { 6 },
                orphans.join(", ")
            );
        }
    }
    let id = identity::router_id(args.router_id, !has_v4)?;
    let ctx = Context::new(&mapping, &hostname, id, args.frr_release);
    match &args.template {
        None => template::render("built-in frr.conf template", template::BUILTIN, &ctx),
        Some(t) => {
            let source = std::fs::read_to_string(t)
                .map_err(|e| format!("{}: cannot read the template: {e}", t.display()))?;
            template::render(&t.display().to_string(), &source, &ctx)
        }
    }
}
