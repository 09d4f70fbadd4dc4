//! The shared vocabulary: the types the wire modules, the core, the
//! configuration and the CLI all speak. Nothing here does I/O.
//!
//! Contract: every type is plain data, cheap to clone, serde-serialisable in
//! a form a person can read (`"192.0.2.10/32"`, `"table_direct"`, not a
//! struct), and parsing from text validates fully (host bits must be zero,
//! length within family; an unknown word names the words allowed). Each
//! concept has one type, here: a prefix, a table mode, an FRR release, the
//! daemon's mode and vantage, and one BGP peer as the core sees it.

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

pub mod intent;

/// Where an atomic write of `path` puts its temporary file: the same
/// directory (a rename within one filesystem), a hidden name owned by this
/// process. Returns (directory, temporary file); None when `path` names no
/// file. Shared by every file ribbridge replaces atomically (the rendered
/// frr.conf, the drain's intent).
pub fn temp_beside(path: &std::path::Path) -> Option<(std::path::PathBuf, std::path::PathBuf)> {
    let name = path.file_name()?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let tmp = dir.join(format!(
        ".{}.ribbridge-{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    Some((dir, tmp))
}

/// A kernel routing table id (`RTA_TABLE`, 32 bits).
pub type TableId = u32;

/// Milliseconds on the daemon's monotonic clock: the owner reads it and
/// passes it in, so the pure code (the core, the BMP station) has no clock
/// of its own.
pub type Millis = u64;

/// RFC 3339 UTC with milliseconds, from Unix milliseconds: how the
/// documents print a time.
pub fn rfc3339(unix_ms: Millis) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(unix_ms);
    humantime::format_rfc3339_millis(t).to_string()
}

/// An address family of unicast routes: the one type every module speaks
/// (the wire modules keep their own encodings of it beside their codecs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// IPv4 unicast.
    Ipv4,
    /// IPv6 unicast.
    Ipv6,
}

impl Family {
    /// The family of a prefix.
    pub fn of(p: &Prefix) -> Family {
        if p.is_ipv4() {
            Family::Ipv4
        } else {
            Family::Ipv6
        }
    }

    /// FRR's word for it (`ipv4`, `ipv6`).
    pub fn name(self) -> &'static str {
        match self {
            Family::Ipv4 => "ipv4",
            Family::Ipv6 => "ipv6",
        }
    }

    /// The longest prefix of the family (32, 128).
    pub fn max_len(self) -> u8 {
        match self {
            Family::Ipv4 => 32,
            Family::Ipv6 => 128,
        }
    }
}

/// The table kube-vip writes VIPs into by default.
pub const VIP_TABLE: TableId = 198;

/// The description that marks the drain's deny entry in bgpd's
/// configuration: how `ribbridge drain`, a restarted daemon and `render`
/// tell ribbridge's drain from an operator's deny, at whatever sequence it
/// sits.
pub const DRAIN_MARK: &str = "ribbridge-drain";

/// The description that marks the deny entry of a VIP's withdrawal (a
/// `withdraw = true` VIP whose backend failed and whose writer is silent or
/// address unusable): it matches [`WITHDRAW_LIST_V4`] or
/// [`WITHDRAW_LIST_V6`], which hold the withdrawn prefixes.
pub const WITHDRAW_MARK: &str = "ribbridge-withdraw";

/// The IPv4 prefix-list of the VIPs ribbridge withdrew.
pub const WITHDRAW_LIST_V4: &str = "ribbridge-withdraw-v4";

/// The IPv6 prefix-list of the VIPs ribbridge withdrew.
pub const WITHDRAW_LIST_V6: &str = "ribbridge-withdraw-v6";

/// The route protocol kube-vip marks its routes with by default.
pub const VIP_PROTOCOL: u8 = 248;

/// An IP prefix: address and length, host bits zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Prefix {
    addr: IpAddr,
    len: u8,
}

/// Why a prefix could not be built or parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PrefixError {
    /// The text is not `ADDRESS/LENGTH`.
    #[error("'{0}' is not a prefix: write ADDRESS/LENGTH, e.g. 192.0.2.10/32 or 2001:db8::10/128")]
    Syntax(String),
    /// The length is larger than the family allows.
    #[error("'{text}': the length must be at most {max}")]
    Length {
        /// The text.
        text: String,
        /// The family's longest.
        max: u8,
    },
    /// Bits are set beyond the length.
    #[error("'{0}' has bits set beyond its length: use the network address")]
    HostBits(String),
}

impl Prefix {
    /// The greatest prefix in the ordering (an upper bound for ranges).
    pub const MAX: Prefix = Prefix {
        addr: IpAddr::V6(std::net::Ipv6Addr::from_bits(u128::MAX)),
        len: u8::MAX,
    };

    /// A prefix from an address and length; rejects host bits and bad lengths.
    pub fn new(addr: IpAddr, len: u8) -> Result<Prefix, PrefixError> {
        let max = max_len(addr);
        if len > max {
            return Err(PrefixError::Length {
                text: format!("{addr}/{len}"),
                max,
            });
        }
        if mask(addr, len) != addr {
            return Err(PrefixError::HostBits(format!("{addr}/{len}")));
        }
        Ok(Prefix { addr, len })
    }

    /// Whether `ip` is inside this prefix (same family, same leading bits).
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = match (self.addr, ip) {
            // An IPv4 peer on a dual-stack socket arrives as ::ffff:a.b.c.d.
            (IpAddr::V4(_), IpAddr::V6(v6)) => match v6.to_ipv4_mapped() {
                Some(v4) => IpAddr::V4(v4),
                None => return false,
            },
            (IpAddr::V6(_), IpAddr::V4(_)) => return false,
            (_, ip) => ip,
        };
        mask(ip, self.len) == self.addr
    }

    /// A host prefix (`/32` or `/128`) for one address.
    pub fn host(addr: IpAddr) -> Prefix {
        Prefix {
            addr,
            len: max_len(addr),
        }
    }

    /// The network address.
    pub fn addr(&self) -> IpAddr {
        self.addr
    }

    /// The prefix length.
    pub fn prefix_len(&self) -> u8 {
        self.len
    }

    /// True for an IPv4 prefix.
    pub fn is_ipv4(&self) -> bool {
        self.addr.is_ipv4()
    }

    /// True when the prefix covers exactly one address.
    pub fn is_host(&self) -> bool {
        self.len == max_len(self.addr)
    }
}

fn max_len(addr: IpAddr) -> u8 {
    if addr.is_ipv4() { 32 } else { 128 }
}

fn mask(addr: IpAddr, len: u8) -> IpAddr {
    match addr {
        IpAddr::V4(a) => {
            let m = u32::MAX.checked_shl(32 - u32::from(len)).unwrap_or(0);
            IpAddr::V4((u32::from(a) & m).into())
        }
        IpAddr::V6(a) => {
            let m = u128::MAX.checked_shl(128 - u32::from(len)).unwrap_or(0);
            IpAddr::V6((u128::from(a) & m).into())
        }
    }
}

impl fmt::Display for Prefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.len)
    }
}

impl FromStr for Prefix {
    type Err = PrefixError;

    fn from_str(s: &str) -> Result<Prefix, PrefixError> {
        let syntax = || PrefixError::Syntax(s.to_string());
        let (a, l) = s.split_once('/').ok_or_else(syntax)?;
        let addr: IpAddr = a.parse().map_err(|_| syntax())?;
        let len: u8 = l.parse().map_err(|_| syntax())?;
        Prefix::new(addr, len)
    }
}

impl Serialize for Prefix {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Prefix {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Prefix, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// A word that is not one of a type's spellings.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{word}' is not a {what}: use {allowed}")]
pub struct UnknownWord {
    /// What was given.
    pub word: String,
    /// What it should have been (`table mode`, `mode`, `vantage`).
    pub what: &'static str,
    /// The spellings allowed.
    pub allowed: &'static str,
}

/// How zebra feeds a kernel table to bgpd. Serialised snake_case
/// (`table_direct`); read in either FRR's or that spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TableMode {
    /// `redistribute table-direct N` (FRR 10.0 and later).
    TableDirect,
    /// `ip import-table N` + `redistribute table N` (every release; the only
    /// one before 10.0).
    ImportTable,
}

/// An FRR release, as zebra's `show version` reports it. Ordered by
/// (major, minor, patch); a release without a patch number sorts first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Release {
    /// Major number (8, 9, 10).
    pub major: u16,
    /// Minor number.
    pub minor: u16,
    /// Patch number, when printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<u16>,
}

/// Why `show version` does not name an FRR release.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "zebra's 'show version' does not start with 'FRRouting <version>' (first line: '{0}'): is this FRR's zebra.vty?"
)]
pub struct ReleaseError(pub String);

impl Release {
    /// `major.minor`, no patch (for constants and comparisons).
    pub const fn new(major: u16, minor: u16) -> Release {
        Release {
            major,
            minor,
            patch: None,
        }
    }

    /// Parses the output of `show version` (first line `FRRouting X.Y[.Z] (host) on ...`).
    pub fn from_show_version(text: &str) -> Result<Release, ReleaseError> {
        let first = text.lines().next().unwrap_or("").trim();
        let bad = || ReleaseError(first.chars().take(120).collect());
        let rest = first.strip_prefix("FRRouting ").ok_or_else(bad)?;
        let ver = rest.split_whitespace().next().ok_or_else(bad)?;
        Release::parse(ver).ok_or_else(bad)
    }

    /// Parses a version like `8.4.4`, `10.3`, `10.4-dev` (only the leading
    /// dotted numbers count: `10.4-dev` is 10.4).
    pub fn parse(ver: &str) -> Option<Release> {
        let numeric: String = ver
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        let mut it = numeric.split('.').filter(|s| !s.is_empty());
        let major = it.next()?.parse().ok()?;
        let minor = it.next()?.parse().ok()?;
        let patch = it.next().and_then(|p| p.parse().ok());
        Some(Release {
            major,
            minor,
            patch,
        })
    }
}

impl fmt::Display for Release {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)?;
        match self.patch {
            Some(p) => write!(f, ".{p}"),
            None => Ok(()),
        }
    }
}

/// What the daemon does with a drift.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Decide and report; never act. The default: a node's verdicts are
    /// read before the daemon is trusted to change its routes, and it
    /// needs no capability.
    #[default]
    Observe,
    /// Heal with the proven action (needs `CAP_NET_ADMIN`).
    Repair,
}

/// Where ribbridge runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Vantage {
    /// Beside the FRR that advertises the VIPs: the full join.
    #[default]
    Node,
    /// On the router (or a worker) that receives them: only the kernel's
    /// ECMP legs for the configured VIPs; `advertised` while it has a route.
    Router,
    /// A BMP station (RFC 7854): routers export their BGP view to it; it
    /// counts the paths each router holds for the configured VIPs. Reads
    /// no kernel and no FRR of its own.
    Bmp,
}

/// Name, `Display`, `FromStr` (naming the allowed words on error) and a
/// `Deserialize` through `FromStr` for a word type, from one table of its
/// spellings: the first is the name, the others are accepted too. A file's
/// bad value then gets the same message as a flag's.
macro_rules! words {
    ($t:ident, $what:literal, $allowed:literal, { $($v:ident => $name:literal $(| $alias:literal)*),+ $(,)? }) => {
        impl $t {
            /// The word as ribbridge prints it.
            pub fn name(self) -> &'static str {
                match self {
                    $($t::$v => $name,)+
                }
            }
        }

        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }

        impl FromStr for $t {
            type Err = UnknownWord;

            fn from_str(s: &str) -> Result<$t, UnknownWord> {
                match s {
                    $($name $(| $alias)* => Ok($t::$v),)+
                    _ => Err(UnknownWord {
                        word: s.to_string(),
                        what: $what,
                        allowed: $allowed,
                    }),
                }
            }
        }

        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<$t, D::Error> {
                String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

words!(TableMode, "table mode", "table-direct (FRR 10) or import-table", {
    TableDirect => "table-direct" | "table_direct",
    ImportTable => "import-table" | "import_table",
});
words!(Mode, "mode", "observe (decide and report, never act) or repair (heal)", {
    Observe => "observe",
    Repair => "repair",
});
words!(Vantage, "vantage", "node (beside FRR), router (the kernel's ECMP paths) or bmp (a BMP station: the paths routers export)", {
    Node => "node",
    Router => "router",
    Bmp => "bmp",
});

/// A set of prefixes read whole from a view (zebra's redistribution or
/// table, a peer's advertised routes) and then only looked up: sorted,
/// without duplicates, in one allocation, found by binary search. 18 bytes
/// a prefix, where a `BTreeSet` takes 40-46 with its nodes (a node holds
/// 100 000 VIPs in each of these views). Built once per read
/// (`collect`); its JSON form is a `BTreeSet`'s, an array in order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct PrefixSet(Box<[Prefix]>);

impl PrefixSet {
    /// The set holds `p`.
    pub fn contains(&self, p: &Prefix) -> bool {
        self.0.binary_search(p).is_ok()
    }

    /// How many prefixes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// No prefix.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The prefixes in order.
    pub fn iter(&self) -> std::slice::Iter<'_, Prefix> {
        self.0.iter()
    }

    /// This set and `other` together.
    pub fn union(self, other: PrefixSet) -> PrefixSet {
        if other.is_empty() {
            return self;
        }
        if self.is_empty() {
            return other;
        }
        self.into_iter().chain(other).collect()
    }
}

impl FromIterator<Prefix> for PrefixSet {
    fn from_iter<I: IntoIterator<Item = Prefix>>(iter: I) -> PrefixSet {
        PrefixSet::from(iter.into_iter().collect::<Vec<_>>())
    }
}

impl From<Vec<Prefix>> for PrefixSet {
    /// Sorts and deduplicates in place, then gives the spare capacity back.
    fn from(mut v: Vec<Prefix>) -> PrefixSet {
        v.sort_unstable();
        v.dedup();
        PrefixSet(v.into_boxed_slice())
    }
}

impl<const N: usize> From<[Prefix; N]> for PrefixSet {
    fn from(a: [Prefix; N]) -> PrefixSet {
        a.into_iter().collect()
    }
}

impl IntoIterator for PrefixSet {
    type Item = Prefix;
    type IntoIter = std::vec::IntoIter<Prefix>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_vec().into_iter()
    }
}

impl<'a> IntoIterator for &'a PrefixSet {
    type Item = &'a Prefix;
    type IntoIter = std::slice::Iter<'a, Prefix>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl Serialize for PrefixSet {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter())
    }
}

impl<'de> Deserialize<'de> for PrefixSet {
    /// Any array of prefixes, in any order, duplicates folded (as into a
    /// `BTreeSet`).
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<PrefixSet, D::Error> {
        Vec::<Prefix>::deserialize(d).map(PrefixSet::from)
    }
}

/// A BGP neighbour as bgpd names it: the address of a numbered session,
/// or the interface of an unnumbered one (`neighbor swp1 interface`).
/// Compared, ordered and shown by bgpd's spelling, which is what its
/// configuration and its JSON key the neighbour by; recorded as that text.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub struct PeerAddr {
    name: String,
    ip: Option<IpAddr>,
}

impl PeerAddr {
    /// bgpd's spelling.
    pub fn as_str(&self) -> &str {
        &self.name
    }

    /// The address of a numbered session (None: an interface).
    pub fn ip(&self) -> Option<IpAddr> {
        self.ip
    }
}

impl From<String> for PeerAddr {
    fn from(name: String) -> PeerAddr {
        let ip = name.parse().ok();
        PeerAddr { name, ip }
    }
}

impl From<&str> for PeerAddr {
    fn from(name: &str) -> PeerAddr {
        PeerAddr::from(name.to_string())
    }
}

impl From<PeerAddr> for String {
    fn from(p: PeerAddr) -> String {
        p.name
    }
}

impl fmt::Display for PeerAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

/// One BGP peer as the core sees it (both address families merged).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeerView {
    /// The neighbour, as bgpd names it.
    pub peer: PeerAddr,
    /// Session state is Established.
    pub established: bool,
    /// Prefixes in this peer's advertised-routes.
    pub advertised: PrefixSet,
    /// How long the session has been established, in milliseconds, when
    /// bgpd says (`peerUptimeMsec`): a session that just came up has not
    /// sent its table yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub up_ms: Option<u64>,
    /// The unicast families the session carries: the peer is activated in
    /// the family (bgpd lists it in that family's summary) and, once
    /// established, the family was negotiated. A peer counts for a VIP only
    /// in the VIP's family: a session per family (the usual node
    /// configuration) has a peer that never carries the other family's
    /// VIPs. A recording made before families were read carries both.
    #[serde(default = "Families::both", skip_serializing_if = "Families::is_both")]
    pub families: Families,
}

impl PeerView {
    /// The session is up and carries `prefix`'s family: the peer counts for
    /// that VIP (among its peers, in `filtered`, in `SENT/PEERS`).
    pub fn carries(&self, prefix: &Prefix) -> bool {
        self.established && self.families.has(Family::of(prefix))
    }

    /// The peer is configured for `prefix`'s family, up or not: it is one
    /// of that VIP's peers in `/status`.
    pub fn serves(&self, prefix: &Prefix) -> bool {
        self.families.has(Family::of(prefix))
    }
}

/// A set of unicast address families (IPv4, IPv6): serialised as the list
/// of their names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Families {
    ipv4: bool,
    ipv6: bool,
}

impl Families {
    /// No family.
    pub const NONE: Families = Families {
        ipv4: false,
        ipv6: false,
    };

    /// Both families.
    pub fn both() -> Families {
        Families {
            ipv4: true,
            ipv6: true,
        }
    }

    /// Only `f`.
    pub fn only(f: Family) -> Families {
        let mut s = Families::NONE;
        s.insert(f);
        s
    }

    /// Whether both are in.
    pub fn is_both(&self) -> bool {
        self.ipv4 && self.ipv6
    }

    /// Whether `f` is in.
    pub fn has(self, f: Family) -> bool {
        match f {
            Family::Ipv4 => self.ipv4,
            Family::Ipv6 => self.ipv6,
        }
    }

    /// Add `f`.
    pub fn insert(&mut self, f: Family) {
        match f {
            Family::Ipv4 => self.ipv4 = true,
            Family::Ipv6 => self.ipv6 = true,
        }
    }

    /// Take `f` out.
    pub fn remove(&mut self, f: Family) {
        match f {
            Family::Ipv4 => self.ipv4 = false,
            Family::Ipv6 => self.ipv6 = false,
        }
    }

    fn list(self) -> Vec<Family> {
        [Family::Ipv4, Family::Ipv6]
            .into_iter()
            .filter(|f| self.has(*f))
            .collect()
    }
}

impl Serialize for Families {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.list())
    }
}

impl<'de> Deserialize<'de> for Families {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Families, D::Error> {
        let mut s = Families::NONE;
        for f in Vec::<Family>::deserialize(d)? {
            s.insert(f);
        }
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_is_exact() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(1_795_996_800_123), "2026-11-30T00:00:00.123Z");
        assert_eq!(rfc3339(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn parses_and_prints_both_families() {
        for s in ["192.0.2.10/32", "10.0.0.0/8", "2001:db8::10/128", "::/0"] {
            assert_eq!(s.parse::<Prefix>().unwrap().to_string(), s);
        }
    }

    #[test]
    fn a_prefix_set_is_a_sorted_set_in_json_and_in_lookups() {
        let p = |s: &str| s.parse::<Prefix>().unwrap();
        let order = [
            "192.0.2.11/32",
            "2001:db8::1/128",
            "10.0.0.1/32",
            "192.0.2.11/32",
        ];
        let set: PrefixSet = order.iter().map(|s| p(s)).collect();
        let tree: std::collections::BTreeSet<Prefix> = order.iter().map(|s| p(s)).collect();
        assert_eq!(set.len(), 3, "duplicates folded");
        assert_eq!(
            serde_json::to_string(&set).unwrap(),
            serde_json::to_string(&tree).unwrap()
        );
        assert!(set.iter().eq(tree.iter()));
        for q in ["192.0.2.11/32", "2001:db8::1/128", "10.0.0.1/32"] {
            assert!(set.contains(&p(q)), "{q}");
        }
        assert!(!set.contains(&p("192.0.2.12/32")));
        let back: PrefixSet = serde_json::from_str(r#"["2001:db8::1/128","10.0.0.1/32"]"#).unwrap();
        assert!(
            back.iter()
                .eq([p("10.0.0.1/32"), p("2001:db8::1/128")].iter())
        );
        let both = back.union(PrefixSet::from([p("192.0.2.11/32"), p("10.0.0.1/32")]));
        assert_eq!(both, set);
        assert!(PrefixSet::default().union(PrefixSet::default()).is_empty());
    }

    #[test]
    fn rejects_bad_prefixes_with_the_reason() {
        assert!(matches!(
            "192.0.2.10".parse::<Prefix>(),
            Err(PrefixError::Syntax(_))
        ));
        assert!(matches!(
            "192.0.2.10/33".parse::<Prefix>(),
            Err(PrefixError::Length { .. })
        ));
        assert!(matches!(
            "192.0.2.10/24".parse::<Prefix>(),
            Err(PrefixError::HostBits(_))
        ));
        let e = "x/1".parse::<Prefix>().unwrap_err().to_string();
        assert!(e.contains("'x/1'") && e.contains("ADDRESS/LENGTH"), "{e}");
    }

    #[test]
    fn serde_is_the_text_form() {
        let p: Prefix = "2001:db8::10/128".parse().unwrap();
        let j = serde_json::to_string(&p).unwrap();
        assert_eq!(j, "\"2001:db8::10/128\"");
        assert_eq!(serde_json::from_str::<Prefix>(&j).unwrap(), p);
        assert!(p.is_host() && !p.is_ipv4());
    }

    #[test]
    fn words_parse_print_and_name_the_allowed_ones() {
        for m in [TableMode::TableDirect, TableMode::ImportTable] {
            assert_eq!(m.to_string().parse::<TableMode>().unwrap(), m);
            let json = serde_json::to_string(&m).unwrap();
            assert_eq!(serde_json::from_str::<TableMode>(&json).unwrap(), m);
        }
        assert_eq!(
            serde_json::from_str::<TableMode>("\"table-direct\"").unwrap(),
            TableMode::TableDirect
        );
        assert_eq!("repair".parse::<Mode>().unwrap(), Mode::Repair);
        assert_eq!("router".parse::<Vantage>().unwrap(), Vantage::Router);
        assert_eq!("bmp".parse::<Vantage>().unwrap(), Vantage::Bmp);
        assert!(
            "station"
                .parse::<Vantage>()
                .unwrap_err()
                .to_string()
                .contains("bmp")
        );
        let e = "kernel".parse::<TableMode>().unwrap_err().to_string();
        assert_eq!(
            e,
            "'kernel' is not a table mode: use table-direct (FRR 10) or import-table"
        );
        assert!(
            "fix"
                .parse::<Mode>()
                .unwrap_err()
                .to_string()
                .contains("observe")
        );
    }

    #[test]
    fn releases_parse_order_and_keep_their_old_serde_form() {
        let r = Release::from_show_version("FRRouting 10.7.1 (n1) on Linux(6.18.44).\n").unwrap();
        assert_eq!((r.major, r.minor, r.patch), (10, 7, Some(1)));
        assert_eq!(r.to_string(), "10.7.1");
        assert!(r >= Release::new(10, 7) && Release::new(10, 3) < Release::new(10, 7));
        assert_eq!(Release::parse("10.4-dev"), Some(Release::new(10, 4)));
        assert_eq!(
            serde_json::to_string(&Release::new(8, 4)).unwrap(),
            r#"{"major":8,"minor":4}"#
        );
        let e = Release::from_show_version("Quagga 1.2 (h)").unwrap_err();
        assert!(e.to_string().contains("Quagga 1.2"), "{e}");
    }
}
