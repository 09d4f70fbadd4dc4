//! The cluster's BGP peer mapping: baremetal-runtimecfg's `FRRPeerMapping`
//! JSON plus the `port` the installer emits, also in the installer's
//! ConfigMap form that adds `apiVIPs` and `ingressVIPs`.
//!
//! Contract: [`Mapping::parse`] either returns a mapping in which every value
//! is valid for frr.conf (addresses, ASNs, ports, timers, communities,
//! passwords), or one [`MappingError`] that names the file, the field (as a
//! JSON path such as `hostOverrides.master-0[1].holdTime`, also for type
//! errors, through `serde_path_to_error`) and what to write instead. A YAML
//! file is recognised and named as such rather than reported as a JSON
//! syntax error on its first line.
//! Unknown fields are errors, never ignored: a misspelt `prot` must not
//! silently become the default port. Every host's peers are validated, not
//! only this host's, because every node receives the same file.

use std::collections::BTreeMap;
use std::fmt;
use std::net::IpAddr;
use std::path::Path;

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};

use crate::model::Prefix;

/// One peer exactly as written in the file (strings where the schema has
/// strings, as runtimecfg's `FRRPeer`).
#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    rename_all = "camelCase",
    expecting = "a peer object (peerAddress, peerASN, ...)"
)]
struct RawPeer {
    peer_address: String,
    #[serde(rename = "peerASN")]
    peer_asn: Int,
    #[serde(default)]
    password: String,
    #[serde(default)]
    bfd_enabled: String,
    /// frr-k8s's `enableGracefulRestart`: not in runtimecfg's schema, an
    /// optional extension (absent means false, as there).
    #[serde(default)]
    enable_graceful_restart: String,
    #[serde(default)]
    ebgp_multi_hop: String,
    #[serde(default)]
    hold_time: String,
    #[serde(default)]
    keepalive_time: String,
    #[serde(default)]
    port: Option<Int>,
}

/// An integer as written, wide enough for any JSON integer, so that range
/// errors name the value ("70000 is out of range") instead of serde's type.
#[derive(Debug, Clone, Copy)]
struct Int(i128);

impl<'de> Deserialize<'de> for Int {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Int, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Int;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an integer")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Int, E> {
                Ok(Int(v.into()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Int, E> {
                Ok(Int(v.into()))
            }
        }
        d.deserialize_i64(V)
    }
}

/// The file as written: `FRRPeerMapping` plus the ConfigMap's VIP lists.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "an FRRPeerMapping object")]
struct RawMapping {
    #[serde(rename = "localASN")]
    local_asn: Int,
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
    /// `neighbor X graceful-restart` (frr-k8s's `enableGracefulRestart`):
    /// this node restarts gracefully towards the peer, so a peer in helper
    /// mode (FRR's default) keeps the node's routes as stale when the
    /// session drops, for the restart time (120 s), instead of at once.
    pub graceful_restart: bool,
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

/// What the file must hold, said after a syntax error or a wrong top level.
const SCHEMA: &str = "the file must be an FRRPeerMapping (localASN, defaultPeers, hostOverrides, \
                      communities; peers with peerAddress, peerASN, password, bfdEnabled, \
                      enableGracefulRestart, ebgpMultiHop, holdTime, keepaliveTime, port), optionally with apiVIPs \
                      and ingressVIPs";

/// Why a mapping file was rejected: the file, the field, the problem.
#[derive(Debug, thiserror::Error)]
pub enum MappingError {
    /// The file cannot be read.
    #[error("{file}: cannot read the peer mapping: {source}")]
    Read {
        /// The file as given.
        file: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file is YAML; the mapping is JSON.
    #[error(
        "{file}: this is YAML; the mapping file is JSON (convert it, e.g. `yq -o json {file}`)"
    )]
    Yaml {
        /// The file as given.
        file: String,
    },
    /// Not JSON at all: serde_json's message with its line and column.
    #[error("{file}: {source}: {SCHEMA}")]
    Syntax {
        /// The file as given.
        file: String,
        /// serde_json's complaint.
        source: serde_json::Error,
    },
    /// JSON whose top level is not an object.
    #[error("{file}: the top level is {found}, not an object: {SCHEMA}")]
    NotAnObject {
        /// The file as given.
        file: String,
        /// What it is ("an array", "a number", ...).
        found: &'static str,
    },
    /// JSON, but not of the schema: a missing or unknown field, a wrong type.
    #[error("{file}: {}", at(field, message, *.field_is_root))]
    Schema {
        /// The file as given.
        file: String,
        /// The JSON path of the field (`hostOverrides.m0[1].peerASN`).
        field: String,
        /// True when the path is the top level (`.`).
        field_is_root: bool,
        /// serde's complaint without its line and column.
        message: String,
        /// serde_json's error, for its line and column.
        source: serde_json::Error,
    },
    /// A value of the schema's type that frr.conf cannot take.
    #[error("{file}: {field}: {problem}")]
    Invalid {
        /// The file as given.
        file: String,
        /// The JSON path of the field.
        field: String,
        /// What is wrong and what to write instead.
        #[source]
        problem: ValueError,
    },
}

fn at(field: &str, message: &str, root: bool) -> String {
    if root {
        format!("{message}: {SCHEMA}")
    } else {
        format!("{field}: {message}")
    }
}

impl MappingError {
    /// The JSON path of the rejected field, if the error is about one.
    pub fn field(&self) -> Option<&str> {
        match self {
            MappingError::Schema {
                field,
                field_is_root: false,
                ..
            }
            | MappingError::Invalid { field, .. } => Some(field),
            _ => None,
        }
    }
}

fn json_kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// Whether `text` is (most likely) YAML rather than JSON: its first
/// meaningful line is a `key:` line, a `---` document marker, a `- ` list
/// item or a `#` comment, none of which JSON has.
pub fn looks_like_yaml(text: &str) -> bool {
    let text = text.trim_start_matches('\u{feff}');
    let Some(line) = text.lines().map(str::trim).find(|l| !l.is_empty()) else {
        return false;
    };
    if line.starts_with('{') || line.starts_with('[') {
        return false;
    }
    if line == "---" || line.starts_with("--- ") || line.starts_with('#') || line.starts_with("- ")
    {
        return true;
    }
    let Some((key, rest)) = line.split_once(':') else {
        return false;
    };
    let key = key.trim();
    let key = match key.chars().next() {
        Some(q @ ('"' | '\'')) if key.len() >= 2 && key.ends_with(q) => &key[1..key.len() - 1],
        Some('"' | '\'') => return false,
        _ => key,
    };
    !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && (rest.is_empty() || rest.starts_with(' '))
}

const WELL_KNOWN: [&str; 7] = [
    "no-export",
    "no-advertise",
    "local-AS",
    "no-peer",
    "blackhole",
    "graceful-shutdown",
    "internet",
];

/// The most a BGP hold or keepalive time can be, in seconds.
const MAX_SECONDS: u32 = 65535;

/// A value of the right JSON type that frr.conf cannot take; each message
/// says what to write instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    /// An ASN of 0 or above 32 bits.
    #[error("{0} is out of range: an ASN is 1 to 4294967295")]
    Asn(i128),
    /// A port of 0 or above 16 bits.
    #[error("{0} is out of range: a TCP port is 1 to 65535")]
    Port(i128),
    /// `peerAddress` is not an address.
    #[error("'{0}' is not an IP address: write e.g. 192.168.1.1 or 2001:db8::1")]
    NotAnAddress(String),
    /// `peerAddress` is an address no BGP session can use.
    #[error(
        "{0} cannot be a BGP peer (unspecified, loopback, multicast or link-local): use the \
         peer's routable address"
    )]
    NotAPeer(IpAddr),
    /// The same peer twice in one list.
    #[error("{address} is listed twice (also {first}): list each peer once")]
    DuplicatePeer {
        /// The address.
        address: IpAddr,
        /// The path of its first entry.
        first: String,
    },
    /// A password frr.conf cannot carry.
    #[error(
        "contains a space or control character, which frr.conf cannot carry: use a password \
         without them"
    )]
    PasswordCharacters,
    /// A password longer than TCP-MD5 allows.
    #[error("is {0} bytes long: TCP-MD5 keys are at most 80 bytes")]
    PasswordLength(usize),
    /// `bfdEnabled`, `enableGracefulRestart` or `ebgpMultiHop` other than "true" or "false".
    #[error("'{0}' must be \"true\" or \"false\"")]
    Flag(String),
    /// A time that is not a Go duration in whole seconds.
    #[error("'{0}' is not a duration: write whole seconds, e.g. \"90\" or \"90s\" or \"1m30s\"")]
    Duration(String),
    /// A hold time below 3 seconds.
    #[error("{0}s is below 3 seconds: BGP needs a hold time of at least 3 seconds")]
    HoldTooShort(u32),
    /// A hold time above 65535 seconds.
    #[error("{0}s is above {MAX_SECONDS} seconds, the most BGP can carry")]
    HoldTooLong(u32),
    /// A keepalive time of 0 or above 65535 seconds.
    #[error("{0}s is out of range: a keepalive time is 1 to {MAX_SECONDS} seconds")]
    Keepalive(u32),
    /// A hold time below the keepalive time.
    #[error(
        "{hold}s is below keepaliveTime {keepalive}s: the hold time must be at least the \
         keepalive time (usually 3 times it)"
    )]
    HoldBelowKeepalive {
        /// Seconds.
        hold: u32,
        /// Seconds.
        keepalive: u32,
    },
    /// A `hostOverrides` key that is not a short hostname.
    #[error("a key must be a short hostname (no dots, no spaces), e.g. master-0")]
    HostKey,
    /// A `hostOverrides` entry without peers.
    #[error("the peer list is empty: list the host's peers or remove the entry")]
    EmptyOverride,
    /// Not a community of either kind nor a well-known name.
    #[error(
        "'{0}' is not a BGP community: write ASN:VALUE with both parts 0 to 65535 (e.g. \
         64512:100), a large community A:B:C with each part 0 to 4294967295, or one of {known}",
        known = WELL_KNOWN.join(", ")
    )]
    Community(String),
    /// A VIP that is not an address.
    #[error("'{0}' is not a VIP: write an address, e.g. 192.168.111.5 or 2001:db8::5")]
    NotAVip(String),
    /// A VIP that is a prefix wider than one address.
    #[error("'{0}' is not a single address: a VIP is a /32 or /128")]
    VipNotHost(String),
}

impl Mapping {
    /// Read and validate the mapping in `path`.
    pub fn load(path: &Path) -> Result<Mapping, MappingError> {
        let file = path.display().to_string();
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(source) => return Err(MappingError::Read { file, source }),
        };
        Mapping::parse(&file, &text)
    }

    /// Validate the mapping `text`; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<Mapping, MappingError> {
        let err = |field: &str, problem: ValueError| MappingError::Invalid {
            file: file.to_string(),
            field: field.to_string(),
            problem,
        };
        if looks_like_yaml(text) {
            return Err(MappingError::Yaml {
                file: file.to_string(),
            });
        }
        if !text.trim_start().starts_with('{') {
            // JSON that is not an object: serde would take an array for a
            // struct's fields in order and blame its second element.
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(text) {
                return Err(MappingError::NotAnObject {
                    file: file.to_string(),
                    found: json_kind(&v),
                });
            }
        }
        let syntax = |source| MappingError::Syntax {
            file: file.to_string(),
            source,
        };
        let mut de = serde_json::Deserializer::from_str(text);
        let raw: RawMapping = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let field = e.path().to_string();
            let source = e.into_inner();
            if !source.is_data() {
                return syntax(source);
            }
            let full = source.to_string();
            let tail = format!(" at line {} column {}", source.line(), source.column());
            let message = full.strip_suffix(&tail).unwrap_or(&full).to_string();
            MappingError::Schema {
                file: file.to_string(),
                field_is_root: field == ".",
                field,
                message,
                source,
            }
        })?;
        // Text after the object is a syntax error too.
        de.end().map_err(syntax)?;
        let local_asn = asn(raw.local_asn).map_err(|w| err("localASN", w))?;
        let default_peers =
            peers("defaultPeers", &raw.default_peers).map_err(|(f, w)| err(&f, w))?;
        let mut host_overrides = BTreeMap::new();
        for (host, list) in &raw.host_overrides {
            let at = format!("hostOverrides.{host}");
            if host.is_empty() || host.contains(char::is_whitespace) || host.contains('.') {
                return Err(err(&at, ValueError::HostKey));
            }
            if list.is_empty() {
                return Err(err(&at, ValueError::EmptyOverride));
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

fn asn(Int(v): Int) -> Result<u32, ValueError> {
    u32::try_from(v)
        .ok()
        .filter(|&a| a != 0)
        .ok_or(ValueError::Asn(v))
}

/// A field path (relative to its list entry) and what is wrong there.
type FieldError = (String, ValueError);

fn peers(list: &str, raw: &[RawPeer]) -> Result<Vec<Peer>, FieldError> {
    let mut out: Vec<Peer> = Vec::new();
    let mut seen = BTreeMap::new();
    for (i, r) in raw.iter().enumerate() {
        let at = format!("{list}[{i}]");
        let p = peer(r).map_err(|(f, w)| (format!("{at}.{f}"), w))?;
        if let Some(j) = seen.insert(p.address, i) {
            return Err((
                format!("{at}.peerAddress"),
                ValueError::DuplicatePeer {
                    address: p.address,
                    first: format!("{list}[{j}]"),
                },
            ));
        }
        out.push(p);
    }
    Ok(out)
}

fn peer(r: &RawPeer) -> Result<Peer, FieldError> {
    let f = |field: &str, what: ValueError| (field.to_string(), what);
    let address = peer_address(&r.peer_address).map_err(|w| f("peerAddress", w))?;
    let asn = asn(r.peer_asn).map_err(|w| f("peerASN", w))?;
    let password = match r.password.as_str() {
        "" => None,
        p if p.chars().any(|c| c.is_whitespace() || c.is_control()) => {
            return Err(f("password", ValueError::PasswordCharacters));
        }
        p if p.len() > 80 => return Err(f("password", ValueError::PasswordLength(p.len()))),
        p => Some(p.to_string()),
    };
    let bfd = flag(&r.bfd_enabled).map_err(|w| f("bfdEnabled", w))?;
    let graceful_restart =
        flag(&r.enable_graceful_restart).map_err(|w| f("enableGracefulRestart", w))?;
    let ebgp_multihop = flag(&r.ebgp_multi_hop).map_err(|w| f("ebgpMultiHop", w))?;
    let port = match r.port {
        None => None,
        Some(Int(p)) => Some(
            u16::try_from(p)
                .ok()
                .filter(|&p| p != 0)
                .ok_or_else(|| f("port", ValueError::Port(p)))?,
        ),
    };
    let hold = seconds(&r.hold_time).map_err(|w| f("holdTime", w))?;
    let keepalive = seconds(&r.keepalive_time).map_err(|w| f("keepaliveTime", w))?;
    let timers = timers(hold, keepalive).map_err(|(field, w)| f(field, w))?;
    Ok(Peer {
        address,
        asn,
        password,
        bfd,
        graceful_restart,
        ebgp_multihop,
        port,
        timers,
    })
}

fn peer_address(s: &str) -> Result<IpAddr, ValueError> {
    let a: IpAddr = s
        .parse()
        .map_err(|_| ValueError::NotAnAddress(s.to_string()))?;
    let link_local = matches!(a, IpAddr::V6(v) if v.segments()[0] & 0xffc0 == 0xfe80);
    if a.is_unspecified() || a.is_multicast() || a.is_loopback() || link_local {
        return Err(ValueError::NotAPeer(a));
    }
    Ok(a)
}

fn flag(s: &str) -> Result<bool, ValueError> {
    match s {
        "" | "false" => Ok(false),
        "true" => Ok(true),
        _ => Err(ValueError::Flag(s.to_string())),
    }
}

/// Whole seconds from "90", "90s", "1m30s" or "1h" (a Go duration in whole
/// seconds, as `metav1.Duration` prints them); `None` for an empty string.
fn seconds(s: &str) -> Result<Option<u32>, ValueError> {
    if s.is_empty() {
        return Ok(None);
    }
    let bad = || ValueError::Duration(s.to_string());
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
) -> Result<Option<Timers>, (&'static str, ValueError)> {
    const MAX: u32 = MAX_SECONDS;
    if let Some(h) = hold {
        if h < 3 {
            return Err(("holdTime", ValueError::HoldTooShort(h)));
        }
        if h > MAX {
            return Err(("holdTime", ValueError::HoldTooLong(h)));
        }
    }
    if let Some(k) = keepalive {
        if !(1..=MAX).contains(&k) {
            return Err(("keepaliveTime", ValueError::Keepalive(k)));
        }
    }
    let (k, h) = match (keepalive, hold) {
        (None, None) => return Ok(None),
        (Some(k), Some(h)) if h < k => {
            return Err((
                "holdTime",
                ValueError::HoldBelowKeepalive {
                    hold: h,
                    keepalive: k,
                },
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

fn community(s: &str) -> Result<Community, ValueError> {
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
    Err(ValueError::Community(s.to_string()))
}

fn vip(s: &str) -> Result<Prefix, ValueError> {
    if let Ok(a) = s.parse::<IpAddr>() {
        return Ok(Prefix::host(a));
    }
    let p: Prefix = s.parse().map_err(|_| ValueError::NotAVip(s.to_string()))?;
    if !p.is_host() {
        return Err(ValueError::VipNotHost(s.to_string()));
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
        // (hold, keepalive) given -> (keepalive, hold) rendered.
        for (hold, keepalive, want) in [
            (Some(9), None, (3, 9)),
            (None, Some(10), (10, 30)),
            (Some(4), None, (1, 4)),
            (None, Some(60000), (60000, 65535)),
        ] {
            let (keepalive_s, hold_s) = want;
            assert_eq!(
                timers(hold, keepalive).unwrap(),
                Some(Timers {
                    keepalive: keepalive_s,
                    hold: hold_s
                }),
                "{hold:?} {keepalive:?}"
            );
        }
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
