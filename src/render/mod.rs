//! frr.conf for this node from the cluster's BGP peer mapping: the library
//! behind `ribbridge render` (whose flags, printing and exit codes live in
//! `cli::render`).
//!
//! Contract: every control-plane node gets the same mapping file; [`render`]
//! picks the node's peers (its `hostOverrides` entry, else `defaultPeers`),
//! its router id, and renders the configuration the enhancement specifies:
//! BGP sessions (with port, password, BFD, timers, ebgp-multihop,
//! disable-connected-check) and the VIP advertisement from table 198
//! through a route-map and prefix-list per address family, with the
//! communities set on what is sent; when the node is drained by intent
//! ([`RenderInput::drained`]), each VIP route-map starts with the drain's
//! deny entry, so that FRR started from the file stays drained (the
//! bootstrap's own re-render does not undrain the node). It returns the
//! text and [`Note`]s (which
//! peers were chosen and why, where the router id came from, warnings) and
//! prints nothing; writing ([`output::write_if_changed`]) and checking
//! ([`check::check`]) are separate calls. Every error is a typed value whose
//! message names what is wrong, where, and what to do.
//!
//! Pieces: [`mapping`] (schema and validation), [`identity`] (hostname,
//! router id), [`template`] (context, built-in and user templates),
//! [`check`] (FRR's parser), [`output`] (atomic write).

pub mod check;
pub mod identity;
pub mod mapping;
pub mod output;
pub mod template;

use std::fmt;
use std::net::IpAddr;
use std::path::PathBuf;

pub use check::CheckError;
pub use identity::{Discovery, IdentityError};
pub use mapping::{MappingError, ValueError};
pub use output::OutputError;
pub use template::TemplateError;

use mapping::Mapping;
use template::Context;

use crate::model::TableMode;

/// Where the peer mapping comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MappingSource {
    /// A file, read by [`render`]; errors name its path as given.
    File(PathBuf),
    /// Text already read; errors name it `name`.
    Text {
        /// What errors call it (a file name, "standard input").
        name: String,
        /// The JSON.
        text: String,
    },
}

impl MappingSource {
    /// The name errors and notes give it.
    pub fn name(&self) -> String {
        match self {
            MappingSource::File(p) => p.display().to_string(),
            MappingSource::Text { name, .. } => name.clone(),
        }
    }
}

/// Everything a render needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderInput {
    /// The FRRPeerMapping JSON (or the installer's ConfigMap form, with
    /// `apiVIPs` and `ingressVIPs`).
    pub mapping: MappingSource,
    /// This node's hostname; `None`: found through `discovery`. Only the
    /// part before the first dot is used.
    pub hostname: Option<String>,
    /// The node address the BGP router id comes from; `None`: found through
    /// `discovery`.
    pub router_id: Option<IpAddr>,
    /// How FRR feeds table 198 to bgpd: table-direct (FRR 10) or
    /// import-table (FRR 8.4's only way).
    pub table_mode: TableMode,
    /// A minijinja template to use instead of the built-in one.
    pub template: Option<PathBuf>,
    /// Where the hostname and node address are looked up when not given.
    pub discovery: Discovery,
    /// `Some(from)`: this node is drained by intent (`from` says where
    /// that was read, for the note), and the configuration keeps the
    /// drain's deny entry ahead of each VIP route-map's entries.
    pub drained: Option<String>,
}

impl RenderInput {
    /// A render of `mapping` for FRR 10 with the built-in template, the
    /// identity found through [`Discovery::default`].
    pub fn new(mapping: MappingSource) -> RenderInput {
        RenderInput {
            mapping,
            hostname: None,
            router_id: None,
            table_mode: TableMode::TableDirect,
            template: None,
            discovery: Discovery::default(),
            drained: None,
        }
    }
}

/// Something the user should read about a render that succeeded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    /// Which choice was made and why (peer list, router id).
    Info(String),
    /// A render that will not do all the mapping asks for.
    Warning(String),
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::Info(s) => f.write_str(s),
            Note::Warning(s) => write!(f, "warning: {s}"),
        }
    }
}

/// A rendered configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    /// frr.conf.
    pub text: String,
    /// What was chosen and why, then the warnings, in that order.
    pub notes: Vec<Note>,
}

/// Why a render failed. The message is complete (it includes its cause's
/// text); `source()` gives the cause to code that inspects it.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// The mapping cannot be read or is invalid.
    #[error(transparent)]
    Mapping(#[from] MappingError),
    /// The hostname or router id cannot be found.
    #[error(transparent)]
    Identity(#[from] IdentityError),
    /// The template cannot be read or rendered.
    #[error(transparent)]
    Template(#[from] TemplateError),
    /// Neither an override nor default peers for this host.
    #[error(
        "{file}: no peers for host '{host}': hostOverrides has no entry '{host}' and \
         defaultPeers is empty; add defaultPeers or a hostOverrides entry for {host}"
    )]
    NoPeers {
        /// The mapping.
        file: String,
        /// The short hostname.
        host: String,
    },
    /// FRR 8.4 asked for where only FRR 10 can advertise what is mapped.
    #[error(
        "{file}: {} but FRR 8.4 cannot advertise IPv6 VIPs (it has no IPv6 import-table; \
         table-direct came with FRR 10): render for FRR 10 with --frr-release 10",
        if *.ipv6_only_peers { "every peer of this host is IPv6" } else { "the mapping lists IPv6 VIPs" }
    )]
    NeedsFrr10 {
        /// The mapping.
        file: String,
        /// True: the host's peers are all IPv6; false: the mapping lists
        /// IPv6 VIPs.
        ipv6_only_peers: bool,
    },
}

/// How many override hosts a note lists before it counts the rest.
const HOSTS_LISTED: usize = 8;

/// Render the configuration `input` describes.
pub fn render(input: &RenderInput) -> Result<Rendered, RenderError> {
    let file = input.mapping.name();
    let mapping = match &input.mapping {
        MappingSource::File(p) => Mapping::load(p)?,
        MappingSource::Text { name, text } => Mapping::parse(name, text)?,
    };
    let host = identity::hostname(input.hostname.as_deref(), &input.discovery)?;
    let hostname = host.value.as_str();
    let (peers, from) = mapping.peers_for(hostname);
    if peers.is_empty() {
        return Err(RenderError::NoPeers {
            file,
            host: hostname.to_string(),
        });
    }
    let mut notes = vec![Note::Info(peers_note(&mapping, &host))];
    let (has_v4, has_v6) = mapping::families(peers);
    let v6_vips = mapping.vips.iter().any(|p| !p.is_ipv4());
    if input.table_mode == TableMode::ImportTable && (v6_vips || !has_v4) {
        return Err(RenderError::NeedsFrr10 {
            file,
            ipv6_only_peers: !has_v4,
        });
    }
    let mut warnings = Vec::new();
    for (v4, has) in [(true, has_v4), (false, has_v6)] {
        let orphans: Vec<String> = mapping
            .vips
            .iter()
            .filter(|p| p.is_ipv4() == v4)
            .map(|p| p.to_string())
            .collect();
        if !has && !orphans.is_empty() {
            warnings.push(Note::Warning(format!(
                "{file}: {from} of '{hostname}' has no IPv{} peer, so {} will not be advertised",
                if v4 { 4 } else { 6 },
                orphans.join(", ")
            )));
        }
    }
    let id = identity::router_id(input.router_id, !has_v4, &input.discovery)?;
    notes.push(Note::Info(router_id_note(&id)));
    let ctx = Context::new(&mapping, hostname, id.value, input.table_mode)
        .drained(input.drained.is_some());
    let text = match &input.template {
        None => template::render(template::BUILTIN_NAME, template::BUILTIN, &ctx)?,
        Some(t) => template::render(&t.display().to_string(), &template::load(t)?, &ctx)?,
    };
    if let Some(from) = &input.drained {
        let entry = format!(" description {}\n", template::DRAIN_MARK);
        if text.contains(&entry) {
            notes.push(Note::Info(format!(
                "drained ({from}): each VIP route-map starts with the drain's deny entry \
                 (description {}), so FRR started from this configuration stays drained; \
                 ribbridge undrain ends it",
                template::DRAIN_MARK
            )));
        } else {
            warnings.push(Note::Warning(format!(
                "drained ({from}), but the template writes no drain entry (a route-map entry \
                 with description {}): FRR started from this configuration advertises the VIPs; \
                 write it when `drained` is true (see the render module's documentation)",
                template::DRAIN_MARK
            )));
        }
    }
    notes.extend(warnings);
    Ok(Rendered { text, notes })
}

/// Which peer list `host` gets, and why.
fn peers_note(mapping: &Mapping, host: &identity::Found<String>) -> String {
    let name = &host.value;
    let who = format!("host '{name}' (from {})", host.from);
    let count = |n: usize| format!("{n} peer{}", if n == 1 { "" } else { "s" });
    if let Some(p) = mapping.host_overrides.get(name) {
        return format!("{who}: using hostOverrides['{name}'] ({})", count(p.len()));
    }
    let defaults = count(mapping.default_peers.len());
    let keys: Vec<&str> = mapping.host_overrides.keys().map(String::as_str).collect();
    if keys.is_empty() {
        return format!("{who}: the mapping has no hostOverrides: using defaultPeers ({defaults})");
    }
    let mut entries = keys
        .iter()
        .take(HOSTS_LISTED)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if keys.len() > HOSTS_LISTED {
        entries.push_str(&format!(", ... ({} in all)", keys.len()));
    }
    format!("{who} is not in hostOverrides (entries: {entries}): using defaultPeers ({defaults})")
}

/// The router id, and where it came from.
fn router_id_note(id: &identity::Found<identity::RouterId>) -> String {
    let r = id.value;
    if IpAddr::V4(r.router_id) == r.node_ip {
        format!("router id {} (from {})", r.router_id, id.from)
    } else {
        format!(
            "router id {} (the low 32 bits of {}, from {})",
            r.router_id, r.node_ip, id.from
        )
    }
}
