//! frr.conf from a template: the built-in one (FRR 10 and the FRR 8.4
//! variant) or a user's, both minijinja, both given the same [`Context`].
//!
//! Contract: rendering is a pure function of the context and the template
//! text (no timestamps, no paths), so an unchanged mapping renders byte for
//! byte the same file and the writer can leave it alone. Undefined names in
//! a template are errors (strict mode), never empty strings in frr.conf.
//!
//! The context a template sees:
//! `hostname`, `router_id` (IPv4, for `bgp router-id`), `node_ip` (the
//! address it came from), `local_asn`, `frr_release` ("10" or "8.4"),
//! `table_mode` ("table-direct" or "import-table"),
//! `vip_table` (198), `peers_from` ("defaultPeers" or "hostOverrides"),
//! `peers` / `ipv4_peers` / `ipv6_peers` (each: `address`, `asn`, `password`,
//! `bfd`, `graceful_restart`, `ebgp_multihop`, `port`, `timers.keepalive`, `timers.hold`; absent
//! optional values are none), `communities` and `large_communities` (lists of
//! strings), `vips` (the `apiVIPs` and `ingressVIPs` as prefixes), and
//! `families`: one entry per address family that has peers, with `name`
//! ("ipv4"/"ipv6"), `match` ("ip"/"ipv6"), `route_map`, `prefix_list`,
//! `peers`, `vips` and `any_host` (the prefix-list entry that admits every
//! host route when the mapping names no VIPs); `drained` (true when the
//! node is drained by intent: write `route-map NAME deny {{ drain_seq }}`
//! with `description {{ drain_mark }}` ahead of each VIP route-map's
//! entries, as the built-in template does), `drain_mark`
//! ("ribbridge-drain") and `drain_seq` (1).

use minijinja::{Environment, UndefinedBehavior};
use serde::Serialize;

use super::mapping::{Community, Mapping, Peer};
use crate::model::{Prefix, TableMode, VIP_TABLE};

/// The built-in template.
pub const BUILTIN: &str = include_str!("frr.conf.j2");

pub use crate::model::DRAIN_MARK;

/// The drain entry's sequence in a rendered route-map: ahead of its first
/// entry (10).
pub const DRAIN_SEQ: u32 = 1;

/// Why a template could not be read or rendered.
#[derive(Debug, thiserror::Error)]
pub enum TemplateError {
    /// The user's template file cannot be read.
    #[error("{}: cannot read the template: {source}", path.display())]
    Read {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The template does not render (syntax, an undefined name, a filter).
    #[error("{name}: the template failed: {source:#}")]
    Render {
        /// The template's name: its path, or the built-in one's name.
        name: String,
        /// minijinja's complaint, with the template line.
        source: minijinja::Error,
    },
}

/// The name the built-in template has in errors.
pub const BUILTIN_NAME: &str = "built-in frr.conf template";

/// The text of the template in `path`.
pub fn load(path: &std::path::Path) -> Result<String, TemplateError> {
    std::fs::read_to_string(path).map_err(|source| TemplateError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// The release name templates compare against (`frr_release`): "8.4" for
/// import-table (FRR 8.4's only way), "10" for table-direct.
pub fn release_name(mode: TableMode) -> &'static str {
    match mode {
        TableMode::TableDirect => "10",
        TableMode::ImportTable => "8.4",
    }
}

/// One address family's part of the configuration.
#[derive(Debug, Serialize)]
pub struct Family {
    name: &'static str,
    #[serde(rename = "match")]
    match_: &'static str,
    route_map: &'static str,
    prefix_list: &'static str,
    any_host: &'static str,
    peers: Vec<Peer>,
    vips: Vec<Prefix>,
}

/// Everything a template can use (see the module documentation).
#[derive(Debug, Serialize)]
pub struct Context {
    hostname: String,
    router_id: std::net::Ipv4Addr,
    node_ip: std::net::IpAddr,
    local_asn: u32,
    frr_release: &'static str,
    table_mode: &'static str,
    vip_table: u32,
    peers_from: &'static str,
    peers: Vec<Peer>,
    ipv4_peers: Vec<Peer>,
    ipv6_peers: Vec<Peer>,
    communities: Vec<String>,
    large_communities: Vec<String>,
    vips: Vec<Prefix>,
    families: Vec<Family>,
    drained: bool,
    drain_mark: &'static str,
    drain_seq: u32,
}

impl Context {
    /// The context for `hostname` (already resolved to its peer list).
    pub fn new(
        mapping: &Mapping,
        hostname: &str,
        id: super::identity::RouterId,
        table_mode: TableMode,
    ) -> Context {
        let (peers, peers_from) = mapping.peers_for(hostname);
        let of = |v4: bool| -> Vec<Peer> {
            peers
                .iter()
                .filter(|p| p.address.is_ipv4() == v4)
                .cloned()
                .collect()
        };
        let vips_of = |v4: bool| -> Vec<Prefix> {
            mapping
                .vips
                .iter()
                .filter(|p| p.is_ipv4() == v4)
                .copied()
                .collect()
        };
        let (ipv4_peers, ipv6_peers) = (of(true), of(false));
        let mut families = Vec::new();
        if !ipv4_peers.is_empty() {
            families.push(Family {
                name: "ipv4",
                match_: "ip",
                route_map: "KUBE-VIP-ROUTES-V4",
                prefix_list: "KUBE-VIP-PREFIXES-V4",
                any_host: "0.0.0.0/0 ge 32",
                peers: ipv4_peers.clone(),
                vips: vips_of(true),
            });
        }
        if !ipv6_peers.is_empty() {
            families.push(Family {
                name: "ipv6",
                match_: "ipv6",
                route_map: "KUBE-VIP-ROUTES-V6",
                prefix_list: "KUBE-VIP-PREFIXES-V6",
                any_host: "::/0 ge 128",
                peers: ipv6_peers.clone(),
                vips: vips_of(false),
            });
        }
        let (mut communities, mut large_communities) = (Vec::new(), Vec::new());
        for c in &mapping.communities {
            match c {
                Community::Standard(s) => communities.push(s.clone()),
                Community::Large(s) => large_communities.push(s.clone()),
            }
        }
        Context {
            hostname: hostname.to_string(),
            router_id: id.router_id,
            node_ip: id.node_ip,
            local_asn: mapping.local_asn,
            frr_release: release_name(table_mode),
            table_mode: table_mode.name(),
            vip_table: VIP_TABLE,
            peers_from,
            peers: peers.to_vec(),
            ipv4_peers,
            ipv6_peers,
            communities,
            large_communities,
            vips: mapping.vips.clone(),
            families,
            drained: false,
            drain_mark: DRAIN_MARK,
            drain_seq: DRAIN_SEQ,
        }
    }

    /// The same context, drained by intent or not.
    pub fn drained(mut self, drained: bool) -> Context {
        self.drained = drained;
        self
    }
}

/// Render `source` (named `name` in errors) with `ctx`.
pub fn render(name: &str, source: &str, ctx: &Context) -> Result<String, TemplateError> {
    let mut env = Environment::new();
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.set_keep_trailing_newline(true);
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.render_named_str(name, source, ctx)
        .map_err(|source| TemplateError::Render {
            name: name.to_string(),
            source,
        })
}
