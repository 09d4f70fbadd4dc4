//! The cluster's BGP peer mapping: baremetal-runtimecfg's `FRRPeerMapping`
//! JSON plus the `port` the installer emits, also in the installer's
//! ConfigMap form that adds `apiVIPs` and `ingressVIPs`.
//!
//! Contract: [`Mapping::parse`] either returns a mapping in which every value
//! is valid for frr.conf (addresses, ASNs, ports, timers, communities,
//! passwords), or one error that names the file, the field (as a JSON path
//! such as `hostOverrides.master-0[1].holdTime`) and what to write instead.
//! Unknown fields are errors, never ignored: a misspelt `prot` must not
//! silently become the default port. Every host's peers are validated, not
//! only this host's, because every node receives the same file.

use std::collections::BTreeMap;
use std::fmt;
use std::net::IpAddr;
use std::path::Path;

use serde::Deserialize;

use crate::model::Prefix;

/// One peer exactly as written in the file (strings where the schema has
/// strings, as runtimecfg's `FRRPeer`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawPeer {
    peer_address: String,
    #[serde(rename = "peerASN")]
    peer_asn: i64,
    #[serde(default)]
    password: String,
    #[serde(default)]
    bfd_enabled: String,
    #[serde(default)]
    ebgp_multi_hop: String,
    #[serde(default)]
    hold_time: String,
    #[serde(default)]
    keepalive_time: String,
    #[serde(default)]
    port: Option<i64>,
}

/// The file as written: `FRRPeerMapping` plus the ConfigMap's VIP lists.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMapping {
    #[serde(rename = "localASN")]
    local_asn: i64,
    #[serde(rename = "defaultPeers", default)]
    default_peers: Vec<RawPeer>,
    #[serde(rename = "hostOverrides", default)]
    host_overrides: BTreeMap<String, Vec<RawPeer>>,
    #[serde(default)]
    communities: Vec<String>,
    #[serde(rename = "apiVIPs", default)]
    api_vips: Vec<String>,
    #[serde(rename = "ingressVIPs", default)]
    ingress_vips: Vec<String>,
}

/// BGP timers of one peer, both resolved (keepalive, hold), in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Timers {
    /// Seconds between keepalives.
    pub keepalive: u16,
    /// Seconds without a message before the session is dropped.
    pub hold: u16,
}

/// One validated peer.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Peer {
    /// The neighbor's address.
    pub address: IpAddr,
    /// The neighbor's AS.
    pub asn: u32,
    /// TCP-MD5 password, if any (never empty, no whitespace).
    pub password: Option<String>,
    /// `neighbor X bfd`.
    pub bfd: bool,
    /// `neighbor X ebgp-multihop`.
    pub ebgp_multihop: bool,
    /// `neighbor X port N`; absent means FRR's default (179).
    pub port: Option<u16>,
    /// `neighbor X timers K H`; absent means FRR's defaults.
    pub timers: Option<Timers>,
}

/// A standard or large BGP community, or a well-known community name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Community {
    /// `ASN:VALUE` (both 0..65535) or a well-known name: `set community`.
    Standard(String),
    /// `A:B:C` (each 0..4294967295): `set large-community`.
    Large(String),
}

/// A validated peer mapping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    /// This cluster's AS.
    pub local_asn: u32,
    /// Peers of every host without an override.
    pub default_peers: Vec<Peer>,
    /// Peers per short hostname.
    pub host_overrides: BTreeMap<String, Vec<Peer>>,
    /// Communities attached to every advertised VIP.
    pub communities: Vec<Community>,
    /// `apiVIPs` then `ingressVIPs` as host prefixes, without duplicates.
    pub vips: Vec<Prefix>,
}

/// Why a mapping file was rejected: the file, the field, the problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MappingError {
    /// The file as given on the command line.
    pub file: String,
    /// The JSON path of the field, empty when the file as a whole is wrong.
    pub field: String,
    /// What is wrong and what to write instead.
    pub what: String,
}

impl fmt::Display for MappingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            write!(f, "{}: {}", self.file, self.what)
        } else {
            write!(f, "{}: {}: {}", self.file, self.field, self.what)
        }
    }
}

impl std::error::Error for MappingError {}

const WELL_KNOWN: [&str; 7] = [
    "no-export",
    "no-advertise",
    "local-AS",
    "no-peer",
    "blackhole",
    "graceful-shutdown",
    "internet",
];

impl Mapping {
    /// Read and validate the mapping in `path`.
    pub fn load(path: &Path) -> Result<Mapping, MappingError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| MappingError {
            file: file.clone(),
            field: String::new(),
            what: format!("cannot read the peer mapping: {e}"),
        })?;
        Mapping::parse(&file, &text)
    }

    /// Validate the mapping `text`; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<Mapping, MappingError> {
        let err = |field: &str, what: String| MappingError {
            file: file.to_string(),
            field: field.to_string(),
            what,
        };
        let raw: RawMapping = serde_json::from_str(text).map_err(|e| {
            err(
                "",
                format!(
                    "{e}: the file must be an FRRPeerMapping (localASN, defaultPeers, \
                     hostOverrides, communities; peers with peerAddress, peerASN, password, \
                     bfdEnabled, ebgpMultiHop, holdTime, keepaliveTime, port), optionally \
                     with apiVIPs and ingressVIPs"
                ),
            )
        })?;
        let local_asn = asn(raw.local_asn).map_err(|w| err("localASN", w))?;
        let default_peers =
            peers("defaultPeers", &raw.default_peers).map_err(|(f, w)| err(&f, w))?;
        let mut host_overrides = BTreeMap::new();
        for (host, list) in &raw.host_overrides {
            let at = format!("hostOverrides.{host}");
            if host.is_empty() || host.contains(char::is_whitespace) || host.contains('.') {
                return Err(err(
                    &at,
                    "a key must be a short hostname (no dots, no spaces), e.g. master-0".into(),
                ));
            }
            if list.is_empty() {
                return Err(err(
                    &at,
                    "the peer list is empty: list the host's peers or remove the entry".into(),
                ));
            }
            let v = peers(&at, list).map_err(|(f, w)| err(&f, w))?;
            host_overrides.insert(host.clone(), v);
        }
        let mut communities = Vec::new();
        for (i, c) in raw.communities.iter().enumerate() {
            communities.push(community(c).map_err(|w| err(&format!("communities[{i}]"), w))?);
        }
        let mut vips: Vec<Prefix> = Vec::new();
        for (name, list) in [
            ("apiVIPs", &raw.api_vips),
            ("ingressVIPs", &raw.ingress_vips),
        ] {
            for (i, v) in list.iter().enumerate() {
                let p = vip(v).map_err(|w| err(&format!("{name}[{i}]"), w))?;
                if !vips.contains(&p) {
                    vips.push(p);
                }
            }
        }
        Ok(Mapping {
            local_asn,
            default_peers,
            host_overrides,
            communities,
            vips,
        })
    }

    /// The peers of `hostname`: its override if there is one, else the
    /// defaults. Also says which list was used.
    pub fn peers_for(&self, hostname: &str) -> (&[Peer], &'static str) {
        match self.host_overrides.get(hostname) {
            Some(p) => (p, "hostOverrides"),
            None => (&self.default_peers, "defaultPeers"),
        }
    }
}

fn asn(v: i64) -> Result<u32, String> {
    u32::try_from(v)
        .ok()
        .filter(|&a| a != 0)
        .ok_or_else(|| format!("{v} is out of range: an ASN is 1 to 4294967295"))
}

type FieldError = (String, String);

fn peers(list: &str, raw: &[RawPeer]) -> Result<Vec<Peer>, FieldError> {
    let mut out: Vec<Peer> = Vec::new();
    let mut seen = BTreeMap::new();
    for (i, r) in raw.iter().enumerate() {
        let at = format!("{list}[{i}]");
        let p = peer(r).map_err(|(f, w)| (format!("{at}.{f}"), w))?;
        if let Some(j) = seen.insert(p.address, i) {
            return Err((
                format!("{at}.peerAddress"),
                format!(
                    "{} is listed twice (also {list}[{j}]): list each peer once",
                    p.address
                ),
            ));
        }
        out.push(p);
    }
    Ok(out)
}

fn peer(r: &RawPeer) -> Result<Peer, FieldError> {
    let f = |field: &str, what: String| (field.to_string(), what);
    let address = peer_address(&r.peer_address).map_err(|w| f("peerAddress", w))?;
    let asn = asn(r.peer_asn).map_err(|w| f("peerASN", w))?;
    let password = match r.password.as_str() {
        "" => None,
        p if p.chars().any(|c| c.is_whitespace() || c.is_control()) => {
            return Err(f(
                "password",
                "contains a space or control character, which frr.conf cannot carry: use a \
                 password without them"
                    .into(),
            ));
        }
        p if p.len() > 80 => {
            return Err(f(
                "password",
                format!(
                    "is {} bytes long: TCP-MD5 keys are at most 80 bytes",
                    p.len()
                ),
            ));
        }
        p => Some(p.to_string()),
    };
    let bfd = flag(&r.bfd_enabled).map_err(|w| f("bfdEnabled", w))?;
    let ebgp_multihop = flag(&r.ebgp_multi_hop).map_err(|w| f("ebgpMultiHop", w))?;
    let port = match r.port {
        None => None,
        Some(p) => Some(u16::try_from(p).ok().filter(|&p| p != 0).ok_or_else(|| {
            f(
                "port",
                format!("{p} is out of range: a TCP port is 1 to 65535"),
            )
        })?),
    };
    let hold = seconds(&r.hold_time).map_err(|w| f("holdTime", w))?;
    let keepalive = seconds(&r.keepalive_time).map_err(|w| f("keepaliveTime", w))?;
    let timers = timers(hold, keepalive).map_err(|(field, w)| f(field, w))?;
    Ok(Peer {
        address,
        asn,
        password,
        bfd,
        ebgp_multihop,
        port,
        timers,
    })
}

fn peer_address(s: &str) -> Result<IpAddr, String> {
    let a: IpAddr = s.parse().map_err(|_| {
        format!("'{s}' is not an IP address: write e.g. 192.168.1.1 or 2001:db8::1")
    })?;
    let link_local = matches!(a, IpAddr::V6(v) if v.segments()[0] & 0xffc0 == 0xfe80);
    if a.is_unspecified() || a.is_multicast() || a.is_loopback() || link_local {
        return Err(format!(
            "{a} cannot be a BGP peer (unspecified, loopback, multicast or link-local): use \
             the peer's routable address"
        ));
    }
    Ok(a)
}

fn flag(s: &str) -> Result<bool, String> {
    match s {
        "" | "false" => Ok(false),
        "true" => Ok(true),
        _ => Err(format!("'{s}' must be \"true\" or \"false\"")),
    }
}

/// Whole seconds from "90", "90s", "1m30s" or "1h" (a Go duration in whole
/// seconds, as `metav1.Duration` prints them); `None` for an empty string.
fn seconds(s: &str) -> Result<Option<u32>, String> {
    if s.is_empty() {
        return Ok(None);
    }
    let bad = || {
        format!("'{s}' is not a duration: write whole seconds, e.g. \"90\" or \"90s\" or \"1m30s\"")
    };
    if let Ok(n) = s.parse::<u32>() {
        return Ok(Some(n));
    }
    let mut total: u64 = 0;
    let mut num = String::new();
    for c in s.chars() {
        if c.is_ascii_digit() {
            num.push(c);
            continue;
        }
        let unit = match c {
            'h' => 3600,
            'm' => 60,
            's' => 1,
            _ => return Err(bad()),
        };
        let n: u64 = num.parse().map_err(|_| bad())?;
        total = total.saturating_add(n.saturating_mul(unit));
        num.clear();
    }
    if !num.is_empty() {
        return Err(bad());
    }
    Ok(Some(u32::try_from(total).unwrap_or(u32::MAX)))
}

/// Resolve the pair: when only one is given the other follows BGP's 3:1
/// ratio (the enhancement's defaults, 90 s and 30 s, keep it too).
fn timers(
    hold: Option<u32>,
    keepalive: Option<u32>,
) -> Result<Option<Timers>, (&'static str, String)> {
    const MAX: u32 = 65535;
    if let Some(h) = hold {
        if h < 3 {
            return Err((
                "holdTime",
                format!("{h}s is below 3 seconds: BGP needs a hold time of at least 3 seconds"),
            ));
        }
        if h > MAX {
            return Err((
                "holdTime",
                format!("{h}s is above {MAX} seconds, the most BGP can carry"),
            ));
        }
    }
    if let Some(k) = keepalive {
        if !(1..=MAX).contains(&k) {
            return Err((
                "keepaliveTime",
                format!("{k}s is out of range: a keepalive time is 1 to {MAX} seconds"),
            ));
        }
    }
    let (k, h) = match (keepalive, hold) {
        (None, None) => return Ok(None),
        (Some(k), Some(h)) if h < k => {
            return Err((
                "holdTime",
                format!(
                    "{h}s is below keepaliveTime {k}s: the hold time must be at least the keepalive time (usually 3 times it)"
                ),
            ));
        }
        (Some(k), Some(h)) => (k, h),
        (Some(k), None) => (k, (k * 3).clamp(3, MAX)),
        (None, Some(h)) => ((h / 3).max(1), h),
    };
    // Both are within 1..=65535 here.
    Ok(Some(Timers {
        keepalive: u16::try_from(k).unwrap_or(u16::MAX),
        hold: u16::try_from(h).unwrap_or(u16::MAX),
    }))
}

fn community(s: &str) -> Result<Community, String> {
    if WELL_KNOWN.contains(&s) {
        return Ok(Community::Standard(s.to_string()));
    }
    let parts: Vec<&str> = s.split(':').collect();
    let all_digits = parts
        .iter()
        .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    if all_digits && parts.len() == 2 && parts.iter().all(|p| p.parse::<u16>().is_ok()) {
        return Ok(Community::Standard(s.to_string()));
    }
    if all_digits && parts.len() == 3 && parts.iter().all(|p| p.parse::<u32>().is_ok()) {
        return Ok(Community::Large(s.to_string()));
    }
    Err(format!(
        "'{s}' is not a BGP community: write ASN:VALUE with both parts 0 to 65535 (e.g. \
         64512:100), a large community A:B:C with each part 0 to 4294967295, or one of {}",
        WELL_KNOWN.join(", ")
    ))
}

fn vip(s: &str) -> Result<Prefix, String> {
    let bad = || format!("'{s}' is not a VIP: write an address, e.g. 192.168.111.5 or 2001:db8::5");
    if let Ok(a) = s.parse::<IpAddr>() {
        return Ok(Prefix::host(a));
    }
    let p: Prefix = s.parse().map_err(|_| bad())?;
    if !p.is_host() {
        return Err(format!(
            "'{s}' is not a single address: a VIP is a /32 or /128"
        ));
    }
    Ok(p)
}

/// Every distinct peer family in `peers`: (has IPv4, has IPv6).
pub fn families(peers: &[Peer]) -> (bool, bool) {
    (
        peers.iter().any(|p| p.address.is_ipv4()),
        peers.iter().any(|p| p.address.is_ipv6()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_in_whole_seconds() {
        assert_eq!(seconds("").unwrap(), None);
        assert_eq!(seconds("90").unwrap(), Some(90));
        assert_eq!(seconds("90s").unwrap(), Some(90));
        assert_eq!(seconds("1m30s").unwrap(), Some(90));
        assert_eq!(seconds("1h").unwrap(), Some(3600));
        for bad in ["1.5s", "90ms", "s", "1m3", "-1", "abc"] {
            assert!(seconds(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn timers_follow_the_three_to_one_ratio() {
        assert_eq!(timers(None, None).unwrap(), None);
        assert_eq!(
            timers(Some(9), None).unwrap(),
            Some(Timers {
                keepalive: 3,
                hold: 9
            })
        );
        assert_eq!(
            timers(None, Some(10)).unwrap(),
            Some(Timers {
                keepalive: 10,
                hold: 30
            })
        );
        assert_eq!(
            timers(Some(4), None).unwrap(),
            Some(Timers {
                keepalive: 1,
                hold: 4
            })
        );
        assert_eq!(
            timers(None, Some(60000)).unwrap(),
            Some(Timers {
                keepalive: 60000,
                hold: 65535
            })
        );
        assert!(timers(Some(2), None).is_err());
        assert!(timers(Some(10), Some(20)).is_err());
        assert!(timers(None, Some(0)).is_err());
    }

    #[test]
    fn communities_standard_large_and_named() {
        assert_eq!(
            community("64512:100").unwrap(),
            Community::Standard("64512:100".into())
        );
        assert_eq!(
            community("no-export").unwrap(),
            Community::Standard("no-export".into())
        );
        assert_eq!(
            community("4200000000:1:2").unwrap(),
            Community::Large("4200000000:1:2".into())
        );
        for bad in ["65536:1", "1", "a:b", "1:2:3:4", ":1", "1::2", "No-Export"] {
            assert!(community(bad).is_err(), "{bad}");
        }
    }
}
