//! Typed views of the JSON that zebra and bgpd print on the vty.
//!
//! Contract: only the fields ribbridge uses are typed; every field that one
//! supported release (8.4, 10.3, 10.7) does not print is an `Option` (or a
//! defaulted bool, for FRR's "present only when true" keys), never a guess.
//! Unknown keys are ignored. Depends on nothing internal but the model.

use std::collections::BTreeMap;
use std::net::IpAddr;

use serde::{Deserialize, Serialize};

use crate::model::{Prefix, PrefixSet};

/// `show ip|ipv6 route table N json`: every route entry of every prefix.
pub type RouteTableView = BTreeMap<Prefix, Vec<ZebraRoute>>;

/// One route entry of zebra's table view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ZebraRoute {
    /// `kernel`, `connected`, `table`, `table-direct`, `bgp`, ...
    pub protocol: String,
    /// The instance (the table id for `table`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<u32>,
    /// Selected in its table (key absent when false).
    #[serde(default)]
    pub selected: bool,
    /// The destination has a selected entry.
    #[serde(default)]
    pub dest_selected: bool,
    /// Installed in the kernel.
    #[serde(default)]
    pub installed: bool,
    /// Failed to install.
    #[serde(default)]
    pub failed: bool,
    /// Queued for processing.
    #[serde(default)]
    pub queued: bool,
    /// Administrative distance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distance: Option<u32>,
    /// Metric.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<u32>,
    /// Tag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<u32>,
    /// Kernel table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<u32>,
    /// Uptime text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uptime: Option<String>,
    /// Nexthops.
    #[serde(default)]
    pub nexthops: Vec<ZebraNexthop>,
}

/// One nexthop of zebra's table view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ZebraNexthop {
    /// `NEXTHOP_FLAG_*` bits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flags: Option<u32>,
    /// In the FIB.
    #[serde(default)]
    pub fib: bool,
    /// Active.
    #[serde(default)]
    pub active: bool,
    /// Gateway.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip: Option<IpAddr>,
    /// Interface only.
    #[serde(default)]
    pub directly_connected: bool,
    /// Interface index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interface_index: Option<u32>,
    /// Interface name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interface_name: Option<String>,
    /// Weight (printed by 10.x; 8.4 omits it for single paths).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<u64>,
}

/// `show bgp ipv4|ipv6 unicast summary json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BgpSummary {
    /// The router id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub router_id: Option<String>,
    /// The local AS (a number, or a string in asdot mode).
    #[serde(default, rename = "as", skip_serializing_if = "Option::is_none")]
    pub local_as: Option<serde_json::Value>,
    /// The peers, keyed by address or interface name.
    #[serde(default)]
    pub peers: BTreeMap<String, BgpPeer>,
}

/// One peer of the summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BgpPeer {
    /// FSM state: `Established`, `Active`, `Idle (Admin)`, ...
    pub state: String,
    /// `OK`, `Admin`, `PfxCt`, `Policy`, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer_state: Option<String>,
    /// Remote AS (number, or string in asdot mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote_as: Option<serde_json::Value>,
    /// The peer's hostname, when it sent one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    /// Prefixes received.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pfx_rcd: Option<u64>,
    /// Prefixes sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pfx_snt: Option<u64>,
    /// Uptime in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer_uptime_msec: Option<u64>,
    /// Sessions established so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections_established: Option<u64>,
    /// Sessions dropped so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections_dropped: Option<u64>,
    /// The peer's software (10.x only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub software_version: Option<String>,
}

impl BgpPeer {
    /// True when the session is up.
    pub fn is_established(&self) -> bool {
        self.state == "Established"
    }
}

/// `show bgp ... neighbors PEER advertised-routes json`, reduced to prefixes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdvertisedRoutes {
    /// The prefixes sent to the peer.
    pub prefixes: PrefixSet,
    /// `totalPrefixCounter`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_prefix_counter: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawAdvertised {
    #[serde(default)]
    advertised_routes: BTreeMap<String, RawAdvertisedEntry>,
    #[serde(default)]
    total_prefix_counter: Option<u64>,
}

/// The one field of an advertised entry read: the rest is skipped unread
/// (a generic JSON value per entry was ~1 kB each at 100 000 routes).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawAdvertisedEntry {
    #[serde(default)]
    prefix_len: Option<u64>,
}

/// Parses advertised-routes JSON. Keys are prefixes (`192.0.2.10/32`); a key
/// without a length is completed from the entry's `prefixLen`.
pub fn parse_advertised(text: &str) -> Result<AdvertisedRoutes, JsonError> {
    let raw: RawAdvertised = serde_json::from_str(text)?;
    let mut prefixes = Vec::with_capacity(raw.advertised_routes.len());
    for (k, v) in raw.advertised_routes {
        let p = if k.contains('/') {
            k.parse::<Prefix>()
        } else {
            let len = v.prefix_len.unwrap_or(0);
            format!("{k}/{len}").parse::<Prefix>()
        };
        prefixes.push(p.map_err(|source| JsonError::Prefix { key: k, source })?);
    }
    Ok(AdvertisedRoutes {
        prefixes: PrefixSet::from(prefixes),
        total_prefix_counter: raw.total_prefix_counter,
    })
}

/// Parses a route table view.
pub fn parse_route_table(text: &str) -> Result<RouteTableView, JsonError> {
    Ok(serde_json::from_str(text)?)
}

/// The destinations of a route table view, and nothing else: each entry is
/// skipped unread, so a table of 100 000 routes costs its prefixes, not
/// ~800 bytes of parsed entries each (benches and docs/PERFORMANCE.md). The
/// client reads the same keys as the reply streams
/// ([`super::scan::KeyScan`]); this is the whole-text form.
pub fn parse_route_prefixes(text: &str) -> Result<PrefixSet, JsonError> {
    super::scan::scan_text(text, super::scan::KeysOf::TopLevel)
}

/// Which unicast families one neighbour's session negotiated, from `show
/// bgp neighbors PEER json` (its `neighborCapabilities.multiprotocolExtensions`:
/// a family is negotiated when bgpd both advertised and received it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Negotiated {
    /// bgpd printed the session's multiprotocol capabilities at all (an
    /// established session does; without them nothing is known).
    pub known: bool,
    /// IPv4 unicast was advertised and received.
    pub ipv4_unicast: bool,
    /// IPv6 unicast was advertised and received.
    pub ipv6_unicast: bool,
}

/// Parses `show bgp neighbors PEER json` down to what the session
/// negotiated ([`Negotiated`]); a reply without the capabilities (the
/// session is not established) is `known: false`, not an error.
pub fn parse_negotiated(text: &str) -> Result<Negotiated, JsonError> {
    let v: serde_json::Value = serde_json::from_str(text)?;
    let Some(peer) = v
        .as_object()
        .and_then(|o| o.values().find(|p| p.is_object()))
    else {
        return Ok(Negotiated::default());
    };
    let Some(mp) = peer
        .pointer("/neighborCapabilities/multiprotocolExtensions")
        .and_then(serde_json::Value::as_object)
    else {
        return Ok(Negotiated::default());
    };
    let both = |key: &str| {
        mp.get(key)
            .and_then(|f| f.get("advertisedAndReceived"))
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false)
    };
    Ok(Negotiated {
        known: true,
        ipv4_unicast: both("ipv4Unicast"),
        ipv6_unicast: both("ipv6Unicast"),
    })
}

/// Parses a per-AFI BGP summary. bgpd prints `{}` when the AFI has no peers.
pub fn parse_summary(text: &str) -> Result<BgpSummary, JsonError> {
    Ok(serde_json::from_str(text)?)
}

/// Why a vty JSON answer cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsonError {
    /// Not JSON of the expected shape (the parser's message, with line and column).
    #[error("{0}")]
    Shape(String),
    /// An advertised-routes key is not a prefix.
    #[error("advertised route key '{key}': {source}")]
    Prefix {
        /// The key as bgpd printed it.
        key: String,
        /// Why it is not a prefix.
        source: crate::model::PrefixError,
    },
}

impl From<serde_json::Error> for JsonError {
    fn from(e: serde_json::Error) -> JsonError {
        // Kept as text: the error type stays Clone + Eq like VtyError.
        JsonError::Shape(e.to_string())
    }
}

pub use crate::model::TableMode;

/// Reads `redistribute table-direct N` / `redistribute table N` lines of a
/// running configuration; `None` when neither names `table`.
pub fn table_mode_from_config(config: &str, table: u32) -> Option<TableMode> {
    let mut found = None;
    for line in config.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.as_slice() {
            ["redistribute", "table-direct", n, ..] if n.parse() == Ok(table) => {
                // table-direct wins: it is what zebra sends bgpd directly.
                return Some(TableMode::TableDirect);
            }
            ["redistribute", "table", n, ..] if n.parse() == Ok(table) => {
                found = Some(TableMode::ImportTable);
            }
            _ => {}
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_mode_is_read_from_config() {
        let c =
            "router bgp 1\n address-family ipv4 unicast\n  redistribute table 198 route-map X\n";
        assert_eq!(table_mode_from_config(c, 198), Some(TableMode::ImportTable));
        assert_eq!(table_mode_from_config(c, 199), None);
        let c = "  redistribute table-direct 198 route-map X\n";
        assert_eq!(table_mode_from_config(c, 198), Some(TableMode::TableDirect));
    }

    #[test]
    fn a_route_table_read_for_its_prefixes_skips_the_entries() {
        let t = r#"{"192.0.2.10/32":[{"protocol":"kernel","nexthops":[{"fib":true}]}],
                    "192.0.2.11/32":[{"protocol":"table","instance":198,"selected":true}]}"#;
        let p = parse_route_prefixes(t).unwrap();
        assert_eq!(
            p,
            [
                "192.0.2.10/32".parse().unwrap(),
                "192.0.2.11/32".parse().unwrap()
            ]
            .into()
        );
        assert_eq!(parse_route_table(t).unwrap().len(), 2);
        assert!(parse_route_prefixes(r#"{"x":[]}"#).is_err());
        assert!(parse_route_prefixes("{}").unwrap().is_empty());
    }

    #[test]
    fn advertised_keys_with_and_without_length() {
        let t = r#"{"advertisedRoutes":{"192.0.2.10/32":{},"10.0.0.0":{"prefixLen":8}},"totalPrefixCounter":2}"#;
        let a = parse_advertised(t).unwrap();
        assert_eq!(a.prefixes.len(), 2);
        assert!(a.prefixes.contains(&"10.0.0.0/8".parse().unwrap()));
        assert!(parse_advertised(r#"{"advertisedRoutes":{"x":{}}}"#).is_err());
    }

    #[test]
    fn negotiated_families_of_a_neighbour() {
        // The shape bgpd prints (`show bgp neighbors PEER json`), cut to
        // the capabilities: IPv4 both ways, IPv6 only advertised by us.
        let t = r#"{"198.18.1.1":{"remoteAs":64500,"bgpState":"Established",
            "neighborCapabilities":{"4byteAs":"advertisedAndReceived",
            "multiprotocolExtensions":{"ipv4Unicast":{"advertisedAndReceived":true},
            "ipv6Unicast":{"advertised":true}}}}}"#;
        let n = parse_negotiated(t).unwrap();
        assert_eq!(
            n,
            Negotiated {
                known: true,
                ipv4_unicast: true,
                ipv6_unicast: false
            }
        );
        // Not established: no capabilities printed, nothing known.
        let idle = r#"{"198.18.1.1":{"remoteAs":64500,"bgpState":"Active"}}"#;
        assert!(!parse_negotiated(idle).unwrap().known);
        assert!(!parse_negotiated("{}").unwrap().known);
        assert!(parse_negotiated("not json").is_err());
    }
}
