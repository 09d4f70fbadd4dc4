//! Who this node is: its short hostname (the key into `hostOverrides`) and
//! its BGP router id, discovered the way baremetal-runtimecfg does.
//!
//! Contract: the hostname is `--hostname`, else the contents of the
//! hostname file (runtimecfg's `RUNTIMECFG_HOSTNAME_PATH`), else the
//! system's, cut at the first dot. The node address is `--router-id`, else
//! `<nodeip-dir>/ipv4` (`ipv6` for an IPv6-only peer list), else the first
//! global address of that family on any interface. `<nodeip-dir>` is
//! `/run/nodeip-configuration` unless `RIBBRIDGE_NODEIP_DIR` says otherwise.
//! Where to look is a [`Discovery`] value: [`Discovery::from_env`] reads the
//! two variables, and tests build one that points at a temporary directory,
//! so they never read the machine's files. FRR's router id is an IPv4
//! dotted quad: an IPv6 node address gives the router id of its low 32
//! bits, which differ between the nodes of one subnet.

use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};

/// The environment variable runtimecfg reads the hostname file from.
pub const HOSTNAME_PATH_ENV: &str = "RUNTIMECFG_HOSTNAME_PATH";
/// Overrides the directory of `ipv4` / `ipv6` (for tests).
pub const NODEIP_DIR_ENV: &str = "RIBBRIDGE_NODEIP_DIR";
/// Where nodeip-configuration writes the node's addresses.
pub const NODEIP_DIR: &str = "/run/nodeip-configuration";

/// Where the node's identity is looked up when no flag gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discovery {
    /// runtimecfg's hostname file (`RUNTIMECFG_HOSTNAME_PATH`); `None`: the
    /// system hostname.
    pub hostname_file: Option<PathBuf>,
    /// The directory of nodeip-configuration's `ipv4` and `ipv6` files.
    pub nodeip_dir: PathBuf,
}

impl Default for Discovery {
    /// The system hostname and [`NODEIP_DIR`].
    fn default() -> Discovery {
        Discovery {
            hostname_file: None,
            nodeip_dir: PathBuf::from(NODEIP_DIR),
        }
    }
}

impl Discovery {
    /// [`HOSTNAME_PATH_ENV`] and [`NODEIP_DIR_ENV`] when set, else the defaults.
    pub fn from_env() -> Discovery {
        Discovery {
            hostname_file: std::env::var_os(HOSTNAME_PATH_ENV).map(PathBuf::from),
            nodeip_dir: std::env::var_os(NODEIP_DIR_ENV)
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from(NODEIP_DIR)),
        }
    }
}

/// Why the node's hostname or router id could not be found.
#[derive(Debug, thiserror::Error)]
pub enum IdentityError {
    /// The hostname file cannot be read.
    #[error(
        "{HOSTNAME_PATH_ENV} names {}, which cannot be read: {source}; fix the path or pass \
         --hostname",
        path.display()
    )]
    HostnameFile {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// gethostname(2) failed.
    #[error("cannot read the system hostname: {source}; pass --hostname")]
    SystemHostname {
        /// Why.
        source: nix::Error,
    },
    /// The hostname found is empty or has spaces.
    #[error("{from}: '{full}' is not a hostname (empty, or with spaces): pass --hostname NAME")]
    BadHostname {
        /// Where it came from.
        from: String,
        /// What was found.
        full: String,
    },
    /// The nodeip file exists but cannot be read.
    #[error("{}: cannot read: {source}; pass --router-id", file.display())]
    NodeipRead {
        /// The file.
        file: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The nodeip file does not hold an address of its family.
    #[error(
        "{}: '{text}' is not an {} address; fix the file or pass --router-id",
        file.display(),
        family(*.ipv6)
    )]
    NodeipBad {
        /// The file.
        file: PathBuf,
        /// What it holds, trimmed.
        text: String,
        /// Whether it is the `ipv6` file.
        ipv6: bool,
    },
    /// getifaddrs(3) failed.
    #[error("cannot list interface addresses: {source}; pass --router-id")]
    Interfaces {
        /// Why.
        source: nix::Error,
    },
    /// Neither the flag, nor the nodeip file, nor an interface gave an address.
    #[error(
        "no router id: --router-id is not given, {} does not exist and no interface has a \
         global {} address; pass --router-id",
        file.display(),
        family(*.ipv6)
    )]
    NoRouterId {
        /// The nodeip file looked for.
        file: PathBuf,
        /// The family looked for.
        ipv6: bool,
    },
    /// The address gives the router id 0.0.0.0.
    #[error(
        "{from}: {node_ip} gives the router id 0.0.0.0, which BGP forbids; pass --router-id \
         with an IPv4 address"
    )]
    ZeroRouterId {
        /// Where the address came from.
        from: String,
        /// The address.
        node_ip: IpAddr,
    },
}

fn family(ipv6: bool) -> &'static str {
    if ipv6 { "IPv6" } else { "IPv4" }
}

/// The node's address and the router id derived from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouterId {
    /// The address it came from (`--router-id`, the nodeip file, an interface).
    pub node_ip: IpAddr,
    /// What `bgp router-id` gets.
    pub router_id: Ipv4Addr,
}

/// A value found and where it was found (`--hostname`, a file's path, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found<T> {
    /// The value.
    pub value: T,
    /// Where it came from, as a user would look for it.
    pub from: String,
}

/// The short hostname: `flag`, else the hostname file of `discovery`, else
/// the system's.
pub fn hostname(flag: Option<&str>, discovery: &Discovery) -> Result<Found<String>, IdentityError> {
    let (full, from) = match flag {
        Some(h) => (h.to_string(), "--hostname".to_string()),
        None => match &discovery.hostname_file {
            Some(p) => {
                let text =
                    std::fs::read_to_string(p).map_err(|source| IdentityError::HostnameFile {
                        path: p.clone(),
                        source,
                    })?;
                (text.trim().to_string(), p.display().to_string())
            }
            None => {
                let h = nix::unistd::gethostname()
                    .map_err(|source| IdentityError::SystemHostname { source })?;
                (
                    h.to_string_lossy().into_owned(),
                    "the system hostname".to_string(),
                )
            }
        },
    };
    match short(&full) {
        Some(value) => Ok(Found { value, from }),
        None => Err(IdentityError::BadHostname { from, full }),
    }
}

/// The hostname up to its first dot; `None` when that is empty or has spaces.
fn short(full: &str) -> Option<String> {
    let s = full.split('.').next().unwrap_or("");
    (!s.is_empty() && !s.chars().any(|c| c.is_whitespace() || c.is_control()))
        .then(|| s.to_string())
}

/// The router id: `flag`, else the nodeip file of the family in
/// `discovery`, else the first global address of that family.
pub fn router_id(
    flag: Option<IpAddr>,
    ipv6_only: bool,
    discovery: &Discovery,
) -> Result<Found<RouterId>, IdentityError> {
    let (node_ip, from) = match flag {
        Some(a) => (a, "--router-id".to_string()),
        None => {
            let file = discovery
                .nodeip_dir
                .join(if ipv6_only { "ipv6" } else { "ipv4" });
            match nodeip_file(&file, ipv6_only)? {
                Some(a) => (a, file.display().to_string()),
                None => match first_global(interface_addresses()?, ipv6_only) {
                    Some(a) => (a, "the first global interface address".to_string()),
                    None => {
                        return Err(IdentityError::NoRouterId {
                            file,
                            ipv6: ipv6_only,
                        });
                    }
                },
            }
        }
    };
    let router_id = match node_ip {
        IpAddr::V4(a) => a,
        IpAddr::V6(a) => Ipv4Addr::from(u32::try_from(u128::from(a) & 0xffff_ffff).unwrap_or(0)),
    };
    if router_id.is_unspecified() {
        return Err(IdentityError::ZeroRouterId { from, node_ip });
    }
    Ok(Found {
        value: RouterId { node_ip, router_id },
        from,
    })
}

/// The address in a nodeip file; `None` when the file does not exist.
fn nodeip_file(file: &Path, v6: bool) -> Result<Option<IpAddr>, IdentityError> {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(IdentityError::NodeipRead {
                file: file.to_path_buf(),
                source,
            });
        }
    };
    let t = text.trim();
    match t.parse::<IpAddr>() {
        Ok(a) if a.is_ipv6() == v6 => Ok(Some(a)),
        _ => Err(IdentityError::NodeipBad {
            file: file.to_path_buf(),
            text: t.to_string(),
            ipv6: v6,
        }),
    }
}

fn interface_addresses() -> Result<Vec<IpAddr>, IdentityError> {
    let addrs =
        nix::ifaddrs::getifaddrs().map_err(|source| IdentityError::Interfaces { source })?;
    Ok(addrs
        .filter_map(|ifa| {
            let a = ifa.address?;
            a.as_sockaddr_in()
                .map(|s| IpAddr::V4(s.ip()))
                .or_else(|| a.as_sockaddr_in6().map(|s| IpAddr::V6(s.ip())))
        })
        .collect())
}

/// The first global (not loopback, link-local, unspecified or multicast)
/// address of the family.
fn first_global(addrs: impl IntoIterator<Item = IpAddr>, v6: bool) -> Option<IpAddr> {
    addrs.into_iter().find(|a| {
        a.is_ipv6() == v6
            && !a.is_loopback()
            && !a.is_unspecified()
            && !a.is_multicast()
            && match a {
                IpAddr::V4(v) => !v.is_link_local(),
                IpAddr::V6(v) => v.segments()[0] & 0xffc0 != 0xfe80,
            }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_hostname_cuts_at_the_first_dot() {
        assert_eq!(short("master-0.example.com").as_deref(), Some("master-0"));
        assert_eq!(short("master-0").as_deref(), Some("master-0"));
        assert_eq!(short(".example.com"), None);
        assert_eq!(short("a b"), None);
    }

    #[test]
    fn first_global_skips_loopback_and_link_local() {
        let a: Vec<IpAddr> = [
            "127.0.0.1",
            "fe80::1",
            "169.254.1.1",
            "::1",
            "2001:db8::7",
            "10.0.0.5",
        ]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect();
        assert_eq!(
            first_global(a.clone(), false),
            Some("10.0.0.5".parse().unwrap())
        );
        assert_eq!(first_global(a, true), Some("2001:db8::7".parse().unwrap()));
    }

    #[test]
    fn ipv6_router_id_is_the_low_32_bits() {
        let d = Discovery::default();
        let r = router_id(Some("2001:db8::c0a8:6f0b".parse().unwrap()), true, &d).unwrap();
        assert_eq!(r.value.router_id, Ipv4Addr::new(192, 168, 111, 11));
        assert!(router_id(Some("2001:db8::".parse().unwrap()), true, &d).is_err());
    }
}
