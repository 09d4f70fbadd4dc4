//! Model types shared by the wire modules and the core: nothing here does I/O.
//!
//! Contract: every type is plain data, cheap to clone, serde-serialisable in
//! a form a person can read (`"192.0.2.10/32"`, not a struct), and parsing
//! from text validates fully (host bits must be zero, length within family).

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A kernel routing table id (`RTA_TABLE`, 32 bits).
pub type TableId = u32;

/// The table kube-vip writes VIPs into by default.
pub const VIP_TABLE: TableId = 198;

/// The route protocol kube-vip marks its routes with by default.
pub const VIP_PROTOCOL: u8 = 248;

/// An IP prefix: address and length, host bits zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Prefix {
    addr: IpAddr,
    len: u8,
}

/// Why a prefix could not be built or parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PrefixError {
    /// The text is not `ADDRESS/LENGTH`.
    Syntax(String),
    /// The length is larger than the family allows.
    Length { text: String, max: u8 },
    /// Bits are set beyond the length.
    HostBits(String),
}

impl fmt::Display for PrefixError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PrefixError::Syntax(t) => write!(
                f,
                "'{t}' is not a prefix: write ADDRESS/LENGTH, e.g. 192.0.2.10/32 or 2001:db8::10/128"
            ),
            PrefixError::Length { text, max } => {
                write!(f, "'{text}': the length must be at most {max}")
            }
            PrefixError::HostBits(t) => write!(
                f,
                "'{t}' has bits set beyond its length: use the network address"
            ),
        }
    }
}

impl std::error::Error for PrefixError {}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_both_families() {
        for s in ["192.0.2.10/32", "10.0.0.0/8", "2001:db8::10/128", "::/0"] {
            assert_eq!(s.parse::<Prefix>().unwrap().to_string(), s);
        }
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
}
