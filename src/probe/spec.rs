//! What a probe is: its URL, expected status, timing, counts and TLS trust,
//! parsed and validated without I/O; the flag and file forms.

use std::fmt;
use std::net::Ipv6Addr;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use serde::Deserialize;

use super::Kind;
use crate::model::{Prefix, PrefixError};

/// The expected status when none is given.
pub const DEFAULT_EXPECT_STATUS: u16 = 200;
/// Milliseconds between two probes when nothing says otherwise
/// (keepalived's checks on OpenShift: 1 to 2 s).
pub const DEFAULT_INTERVAL_MS: u64 = 2000;
/// Milliseconds a probe may take when nothing says otherwise.
pub const DEFAULT_TIMEOUT_MS: u64 = 1000;
/// Consecutive failures that turn a probe down when nothing says otherwise.
pub const DEFAULT_FALL: u32 = 3;
/// Consecutive successes that turn a probe up when nothing says otherwise.
pub const DEFAULT_RISE: u32 = 3;

/// The accepted form, for messages.
const URL_FORM: &str = "write http[s]://HOST[:PORT][/PATH], e.g. https://localhost:6443/readyz";

/// `http` or `https`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scheme {
    /// Plain HTTP/1.1.
    Http,
    /// HTTP/1.1 over TLS.
    Https,
}

impl Scheme {
    /// `http` or `https`.
    pub fn name(self) -> &'static str {
        match self {
            Scheme::Http => "http",
            Scheme::Https => "https",
        }
    }

    /// 80 or 443.
    pub fn default_port(self) -> u16 {
        match self {
            Scheme::Http => 80,
            Scheme::Https => 443,
        }
    }
}

/// A probe's URL: scheme, host (a name, an IPv4 or an IPv6 address), port
/// and the request target (path and query). Displays as it would be
/// written, the port always shown.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Url {
    scheme: Scheme,
    host: String,
    port: u16,
    path: String,
}

impl Url {
    /// `http` or `https`.
    pub fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// The host name (lower case) or address, an IPv6 address without
    /// brackets.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The port (the scheme's default when the URL gives none).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The request target: the path, and the query if any; `/` at least.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The `Host` header: the host (an IPv6 address in brackets), and the
    /// port unless it is the scheme's default (as curl sends it).
    pub fn host_header(&self) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        if self.port == self.scheme.default_port() {
            host
        } else {
            format!("{host}:{}", self.port)
        }
    }
}

impl fmt::Display for Url {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        write!(
            f,
            "{}://{host}:{}{}",
            self.scheme.name(),
            self.port,
            self.path
        )
    }
}

/// A URL text that [`Url`] refuses; each names the bad part and the
/// accepted form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    /// Nothing given.
    #[error("the probe URL is empty: {URL_FORM}")]
    Empty,
    /// No `SCHEME://`.
    #[error("probe URL '{url}' has no scheme: {URL_FORM}")]
    NoScheme {
        /// The text.
        url: String,
    },
    /// A scheme other than `http` and `https`.
    #[error("probe URL '{url}': scheme '{scheme}' is not supported: use http or https")]
    Scheme {
        /// The text.
        url: String,
        /// The scheme given.
        scheme: String,
    },
    /// `user@host`.
    #[error("probe URL '{url}': user information is not supported: remove 'USER@'")]
    UserInfo {
        /// The text.
        url: String,
    },
    /// `#fragment`: never sent to a server.
    #[error("probe URL '{url}': a fragment ('#...') is never sent to the server: remove it")]
    Fragment {
        /// The text.
        url: String,
    },
    /// A space or a control character somewhere.
    #[error("probe URL '{url}' contains a space or a control character: percent-encode it")]
    Whitespace {
        /// The text.
        url: String,
    },
    /// No host.
    #[error("probe URL '{url}' has no host: {URL_FORM}")]
    NoHost {
        /// The text.
        url: String,
    },
    /// A host that is neither a name nor an address.
    #[error(
        "probe URL '{url}': '{host}' is not a host name or an address (IPv6 in brackets, as in https://[::1]:6443/readyz)"
    )]
    Host {
        /// The text.
        url: String,
        /// The host part.
        host: String,
    },
    /// A port that is not 1 to 65535.
    #[error("probe URL '{url}': port '{port}' is not a number from 1 to 65535")]
    Port {
        /// The text.
        url: String,
        /// The port part.
        port: String,
    },
    /// A path HTTP/1.1 cannot carry.
    #[error("probe URL '{url}': '{path}' is not a valid request path: percent-encode it")]
    Path {
        /// The text.
        url: String,
        /// The path part.
        path: String,
    },
}

impl FromStr for Url {
    type Err = UrlError;

    fn from_str(text: &str) -> Result<Url, UrlError> {
        let url = || text.to_string();
        if text.is_empty() {
            return Err(UrlError::Empty);
        }
        if text
            .bytes()
            .any(|b| b.is_ascii_whitespace() || b.is_ascii_control())
        {
            return Err(UrlError::Whitespace { url: url() });
        }
        let (scheme, rest) = text
            .split_once("://")
            .ok_or_else(|| UrlError::NoScheme { url: url() })?;
        let scheme = match scheme.to_ascii_lowercase().as_str() {
            "http" => Scheme::Http,
            "https" => Scheme::Https,
            _ => {
                return Err(UrlError::Scheme {
                    url: url(),
                    scheme: scheme.to_string(),
                });
            }
        };
        if rest.contains('#') {
            return Err(UrlError::Fragment { url: url() });
        }
        let cut = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, target) = rest.split_at(cut);
        if authority.contains('@') {
            return Err(UrlError::UserInfo { url: url() });
        }
        if authority.is_empty() {
            return Err(UrlError::NoHost { url: url() });
        }
        let bad_host = |host: &str| UrlError::Host {
            url: url(),
            host: host.to_string(),
        };
        let (host, port) = if let Some(r) = authority.strip_prefix('[') {
            let (v6, after) = r.split_once(']').ok_or_else(|| bad_host(authority))?;
            let v6: Ipv6Addr = v6.parse().map_err(|_| bad_host(v6))?;
            let port = match after {
                "" => None,
                p => Some(p.strip_prefix(':').ok_or_else(|| bad_host(authority))?),
            };
            (v6.to_string(), port)
        } else {
            let (host, port) = match authority.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (authority, None),
            };
            if host.is_empty() {
                return Err(UrlError::NoHost { url: url() });
            }
            let name_like = host.split('.').all(|l| {
                !l.is_empty() && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            });
            if !name_like {
                return Err(bad_host(host));
            }
            (host.to_ascii_lowercase(), port)
        };
        let port = match port {
            None => scheme.default_port(),
            Some(p) => match p.parse::<u16>() {
                Ok(n) if n != 0 && p.bytes().all(|b| b.is_ascii_digit()) => n,
                _ => {
                    return Err(UrlError::Port {
                        url: url(),
                        port: p.to_string(),
                    });
                }
            },
        };
        let path = match target {
            "" => "/".to_string(),
            t if t.starts_with('?') => format!("/{t}"),
            t => t.to_string(),
        };
        if !path.bytes().all(|b| b.is_ascii_graphic()) || path.parse::<hyper::Uri>().is_err() {
            return Err(UrlError::Path { url: url(), path });
        }
        Ok(Url {
            scheme,
            host,
            port,
            path,
        })
    }
}

/// One probe: what to ask and how to judge the answers. Build it with
/// [`ProbeSpec::new`] (the defaults) or [`ProbeSpec::parse`], change the
/// fields, then [`ProbeSpec::validate`] (which [`super::Probe::new`] calls).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeSpec {
    /// What to `GET`.
    pub url: Url,
    /// The status that means healthy.
    pub expect_status: u16,
    /// Milliseconds from one probe's start to the next one's.
    pub interval_ms: u64,
    /// Milliseconds one probe may take, connection and TLS included.
    pub timeout_ms: u64,
    /// Consecutive failures that turn the probe down.
    pub fall: u32,
    /// Consecutive successes that turn the probe up.
    pub rise: u32,
    /// PEM file of the CA certificates trusted for an `https` URL.
    pub ca_file: Option<PathBuf>,
    /// Trust any certificate of an `https` URL (`curl -k`).
    pub insecure: bool,
}

/// A spec [`ProbeSpec::validate`] refuses; each says what to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// The URL text.
    #[error(transparent)]
    Url(#[from] UrlError),
    /// A status that is not an HTTP status.
    #[error(
        "probe {url}: expected status {status} is not an HTTP status: use 100 to 599 (200 by default)"
    )]
    Status {
        /// The URL.
        url: Url,
        /// The status given.
        status: u16,
    },
    /// An interval of 0.
    #[error("probe {url}: the interval must be at least 1 ms ({DEFAULT_INTERVAL_MS} by default)")]
    Interval {
        /// The URL.
        url: Url,
    },
    /// A timeout of 0 or longer than the interval.
    #[error(
        "probe {url}: timeout {timeout_ms} ms must be from 1 ms to the interval ({interval_ms} ms): lower the timeout or raise the interval"
    )]
    Timeout {
        /// The URL.
        url: Url,
        /// The timeout given.
        timeout_ms: u64,
        /// The interval given.
        interval_ms: u64,
    },
    /// `fall` or `rise` of 0.
    #[error("probe {url}: {which} must be at least 1 ({default} by default)")]
    Count {
        /// The URL.
        url: Url,
        /// `fall` or `rise`.
        which: &'static str,
        /// Its default.
        default: u32,
    },
    /// `ca_file` or `insecure` on a plain `http` URL.
    #[error("probe {url}: ca_file and insecure are for https URLs: remove them or use https")]
    TlsOnHttp {
        /// The URL.
        url: Url,
    },
    /// Both `ca_file` and `insecure`.
    #[error(
        "probe {url}: ca_file and insecure exclude each other: keep ca_file to check the certificate, or insecure not to"
    )]
    TlsBoth {
        /// The URL.
        url: Url,
    },
    /// An `https` URL that trusts nothing.
    #[error(
        "probe {url}: an https probe needs ca_file (the PEM of the CA that signed the server's certificate) or insecure = true (no check, as curl -k): there is no system trust store"
    )]
    NoTrust {
        /// The URL.
        url: Url,
    },
    /// An `https` host that cannot be a TLS server name.
    #[error("probe {url}: '{host}' cannot be a TLS server name: use a DNS name or an address")]
    ServerName {
        /// The URL.
        url: Url,
        /// The host.
        host: String,
    },
}

impl ProbeSpec {
    /// A spec for `url` with the defaults: status 200, every 2 000 ms,
    /// timeout 1 000 ms, fall 3, rise 3, no TLS option.
    pub fn new(url: Url) -> ProbeSpec {
        ProbeSpec {
            url,
            expect_status: DEFAULT_EXPECT_STATUS,
            interval_ms: DEFAULT_INTERVAL_MS,
            timeout_ms: DEFAULT_TIMEOUT_MS,
            fall: DEFAULT_FALL,
            rise: DEFAULT_RISE,
            ca_file: None,
            insecure: false,
        }
    }

    /// [`ProbeSpec::new`] of a URL text.
    pub fn parse(url: &str) -> Result<ProbeSpec, UrlError> {
        Ok(ProbeSpec::new(url.parse()?))
    }

    /// The interval.
    pub fn interval(&self) -> Duration {
        Duration::from_millis(self.interval_ms)
    }

    /// The timeout.
    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms)
    }

    /// The spec as a whole: a status of 100 to 599, an interval of at
    /// least 1 ms, a timeout from 1 ms to the interval, counts of at least
    /// 1, and TLS trust that suits the scheme.
    pub fn validate(&self) -> Result<(), SpecError> {
        let url = || self.url.clone();
        if !(100..=599).contains(&self.expect_status) {
            return Err(SpecError::Status {
                url: url(),
                status: self.expect_status,
            });
        }
        if self.interval_ms == 0 {
            return Err(SpecError::Interval { url: url() });
        }
        if self.timeout_ms == 0 || self.timeout_ms > self.interval_ms {
            return Err(SpecError::Timeout {
                url: url(),
                timeout_ms: self.timeout_ms,
                interval_ms: self.interval_ms,
            });
        }
        for (which, n, default) in [
            ("fall", self.fall, DEFAULT_FALL),
            ("rise", self.rise, DEFAULT_RISE),
        ] {
            if n == 0 {
                return Err(SpecError::Count {
                    url: url(),
                    which,
                    default,
                });
            }
        }
        match (self.url.scheme, self.ca_file.is_some(), self.insecure) {
            (Scheme::Http, false, false) => Ok(()),
            (Scheme::Http, _, _) => Err(SpecError::TlsOnHttp { url: url() }),
            (Scheme::Https, true, true) => Err(SpecError::TlsBoth { url: url() }),
            (Scheme::Https, false, false) => Err(SpecError::NoTrust { url: url() }),
            (Scheme::Https, _, _) => {
                rustls::pki_types::ServerName::try_from(self.url.host.as_str()).map_err(|_| {
                    SpecError::ServerName {
                        url: url(),
                        host: self.url.host.clone(),
                    }
                })?;
                Ok(())
            }
        }
    }
}

/// A `--probe`-style flag value that is not `PREFIX=URL`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FlagError {
    /// No `=`.
    #[error("'{text}' is not PREFIX=URL: write e.g. 192.0.2.10/32=https://localhost:6443/readyz")]
    Syntax {
        /// The text.
        text: String,
    },
    /// The prefix part.
    #[error("'{text}': the part before '=' is not a VIP prefix")]
    Prefix {
        /// The text.
        text: String,
        /// Why.
        #[source]
        error: PrefixError,
    },
    /// The URL part.
    #[error("'{text}': the part after '=' is not a probe URL")]
    Url {
        /// The text.
        text: String,
        /// Why.
        #[source]
        error: UrlError,
    },
}

/// The flag form `PREFIX=URL` (`192.0.2.10/32=https://localhost:6443/readyz`):
/// the VIP and its URL, both checked; split at the first `=` (a prefix has
/// none, a URL's query may).
pub fn parse_flag(text: &str) -> Result<(Prefix, Url), FlagError> {
    let (prefix, url) = text.split_once('=').ok_or_else(|| FlagError::Syntax {
        text: text.to_string(),
    })?;
    let prefix = prefix.trim().parse().map_err(|error| FlagError::Prefix {
        text: text.to_string(),
        error,
    })?;
    let url = url.trim().parse().map_err(|error| FlagError::Url {
        text: text.to_string(),
        error,
    })?;
    Ok((prefix, url))
}

/// One `[[vip]]` table of the configuration file: a VIP's probes and their
/// shared settings. Types and parsing only; the daemon decides what a
/// failing probe does (`withdraw`).
///
/// ```toml
/// [[vip]]
/// prefix = "192.0.2.10/32"
/// health = "https://localhost:6443/livez"
/// ready = "https://localhost:6443/readyz"
/// insecure = true
/// fall = 2
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct VipProbes {
    /// The VIP.
    pub prefix: Prefix,
    /// The health probe's URL: down means this node cannot serve the VIP.
    #[serde(default)]
    pub health: Option<String>,
    /// The ready probe's URL: failing while health passes means draining.
    #[serde(default)]
    pub ready: Option<String>,
    /// The expected status.
    #[serde(default = "default_expect_status")]
    pub expect_status: u16,
    /// Milliseconds between probes.
    #[serde(default = "default_interval_ms")]
    pub interval_ms: u64,
    /// Milliseconds a probe may take.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
    /// Consecutive failures that turn a probe down.
    #[serde(default = "default_fall")]
    pub fall: u32,
    /// Consecutive successes that turn a probe up.
    #[serde(default = "default_rise")]
    pub rise: u32,
    /// PEM file of the CA certificates trusted for `https` URLs.
    #[serde(default)]
    pub ca_file: Option<PathBuf>,
    /// Trust any certificate of `https` URLs (`curl -k`).
    #[serde(default)]
    pub insecure: bool,
    /// Whether a failing probe withdraws the VIP (off: reported only).
    #[serde(default)]
    pub withdraw: bool,
}

fn default_expect_status() -> u16 {
    DEFAULT_EXPECT_STATUS
}
fn default_interval_ms() -> u64 {
    DEFAULT_INTERVAL_MS
}
fn default_timeout_ms() -> u64 {
    DEFAULT_TIMEOUT_MS
}
fn default_fall() -> u32 {
    DEFAULT_FALL
}
fn default_rise() -> u32 {
    DEFAULT_RISE
}

impl VipProbes {
    /// A VIP's table with no probe yet and every setting at its default
    /// (the flags' `--health` and `--ready` fill in the URLs).
    pub fn new(prefix: Prefix) -> VipProbes {
        VipProbes {
            prefix,
            health: None,
            ready: None,
            expect_status: DEFAULT_EXPECT_STATUS,
            interval_ms: DEFAULT_INTERVAL_MS,
            timeout_ms: DEFAULT_TIMEOUT_MS,
            fall: DEFAULT_FALL,
            rise: DEFAULT_RISE,
            ca_file: None,
            insecure: false,
            withdraw: false,
        }
    }

    /// The table's probes (health first), each with the shared settings,
    /// validated.
    pub fn specs(&self) -> Result<Vec<(Kind, ProbeSpec)>, SpecError> {
        [(Kind::Health, &self.health), (Kind::Ready, &self.ready)]
            .into_iter()
            .filter_map(|(kind, url)| url.as_deref().map(|u| (kind, u)))
            .map(|(kind, url)| {
                let spec = ProbeSpec {
                    url: url.parse()?,
                    expect_status: self.expect_status,
                    interval_ms: self.interval_ms,
                    timeout_ms: self.timeout_ms,
                    fall: self.fall,
                    rise: self.rise,
                    ca_file: self.ca_file.clone(),
                    insecure: self.insecure,
                };
                spec.validate()?;
                Ok((kind, spec))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        s.parse().unwrap()
    }

    #[test]
    fn url_parts_and_defaults() {
        let u = url("https://LocalHost:6443/readyz?verbose");
        assert_eq!(u.scheme(), Scheme::Https);
        assert_eq!(u.host(), "localhost");
        assert_eq!(u.port(), 6443);
        assert_eq!(u.path(), "/readyz?verbose");
        assert_eq!(u.host_header(), "localhost:6443");
        assert_eq!(u.to_string(), "https://localhost:6443/readyz?verbose");

        let u = url("http://192.0.2.1");
        assert_eq!((u.port(), u.path()), (80, "/"));
        assert_eq!(u.host_header(), "192.0.2.1");
        assert_eq!(url("HTTPS://example.com?x=1").path(), "/?x=1");
        assert_eq!(url("https://example.com/").port(), 443);

        let u = url("http://[2001:db8::1]:8080/healthz");
        assert_eq!(u.host(), "2001:db8::1");
        assert_eq!(u.host_header(), "[2001:db8::1]:8080");
        assert_eq!(u.to_string(), "http://[2001:db8::1]:8080/healthz");
        assert_eq!(url("http://[::1]/").host_header(), "[::1]");
    }

    #[test]
    fn url_errors_name_the_bad_part() {
        let cases: &[(&str, &str)] = &[
            ("", "empty"),
            ("localhost:6443/readyz", "no scheme"),
            ("ftp://host/", "scheme 'ftp'"),
            ("https://user:pw@host/", "user information"),
            ("https://host/x#frag", "fragment"),
            ("https://host/a b", "space"),
            ("https:///readyz", "no host"),
            ("https://:443/", "no host"),
            ("https://ho_st/", "'ho_st' is not a host"),
            ("https://host..x/", "'host..x'"),
            ("https://::1/", "IPv6 in brackets"),
            ("https://[::1/", "'[::1'"),
            ("https://[zz::1]:80/", "'zz::1'"),
            ("https://[::1]x/", "'[::1]x'"),
            ("https://host:0/", "port '0'"),
            ("https://host:70000/", "port '70000'"),
            ("https://host:+80/", "port '+80'"),
            ("https://host:/", "port ''"),
            ("http://host/\u{7f}", "control"),
            ("http://host/caf\u{e9}", "not a valid request path"),
        ];
        for (text, needle) in cases {
            let e = text
                .parse::<Url>()
                .map(|u| u.to_string())
                .expect_err(text)
                .to_string();
            assert!(e.contains(needle), "{text:?}: {e}");
        }
    }

    #[test]
    fn spec_defaults_validate_and_durations() {
        let s = ProbeSpec::parse("http://127.0.0.1:8080/healthz").unwrap();
        assert_eq!(
            (s.expect_status, s.interval_ms, s.timeout_ms, s.fall, s.rise),
            (200, 2000, 1000, 3, 3)
        );
        assert_eq!(s.interval(), Duration::from_secs(2));
        assert_eq!(s.timeout(), Duration::from_secs(1));
        s.validate().unwrap();
    }

    #[test]
    fn spec_errors_say_what_to_change() {
        let base = ProbeSpec::parse("http://127.0.0.1:8080/healthz").unwrap();
        let tls = ProbeSpec::parse("https://localhost:6443/readyz").unwrap();
        let check = |s: ProbeSpec, needle: &str| {
            let e = s.validate().expect_err(needle).to_string();
            assert!(e.contains(needle), "{e}");
            assert!(e.contains("probe "), "{e}");
        };
        check(
            ProbeSpec {
                expect_status: 99,
                ..base.clone()
            },
            "100 to 599",
        );
        check(
            ProbeSpec {
                expect_status: 600,
                ..base.clone()
            },
            "100 to 599",
        );
        check(
            ProbeSpec {
                interval_ms: 0,
                ..base.clone()
            },
            "at least 1 ms",
        );
        check(
            ProbeSpec {
                timeout_ms: 0,
                ..base.clone()
            },
            "lower the timeout",
        );
        check(
            ProbeSpec {
                timeout_ms: 3000,
                ..base.clone()
            },
            "raise the interval",
        );
        check(
            ProbeSpec {
                fall: 0,
                ..base.clone()
            },
            "fall must be at least 1",
        );
        check(
            ProbeSpec {
                rise: 0,
                ..base.clone()
            },
            "rise must be at least 1",
        );
        check(
            ProbeSpec {
                insecure: true,
                ..base.clone()
            },
            "for https URLs",
        );
        check(
            ProbeSpec {
                ca_file: Some("/ca.pem".into()),
                ..base.clone()
            },
            "for https URLs",
        );
        check(tls.clone(), "needs ca_file");
        check(
            ProbeSpec {
                ca_file: Some("/ca.pem".into()),
                insecure: true,
                ..tls.clone()
            },
            "exclude each other",
        );
        ProbeSpec {
            insecure: true,
            ..tls.clone()
        }
        .validate()
        .unwrap();
        ProbeSpec {
            ca_file: Some("/ca.pem".into()),
            ..tls
        }
        .validate()
        .unwrap();
        // The timeout may equal the interval.
        ProbeSpec {
            timeout_ms: 2000,
            ..base
        }
        .validate()
        .unwrap();
    }

    #[test]
    fn flag_form() {
        let (p, u) = parse_flag("192.0.2.10/32=https://localhost:6443/readyz").unwrap();
        assert_eq!(p, "192.0.2.10/32".parse().unwrap());
        assert_eq!(u, url("https://localhost:6443/readyz"));
        // The first '=' splits: a query may hold more.
        let (_, u) = parse_flag("2001:db8::10/128=http://[::1]:8080/ready?a=b").unwrap();
        assert_eq!(u.path(), "/ready?a=b");

        let e = parse_flag("192.0.2.10/32").unwrap_err();
        assert!(matches!(e, FlagError::Syntax { .. }), "{e}");
        assert!(e.to_string().contains("PREFIX=URL"));
        let e = parse_flag("192.0.2.10=http://h/").unwrap_err();
        assert!(matches!(e, FlagError::Prefix { .. }), "{e}");
        let e = parse_flag("192.0.2.10/32=ftp://h/").unwrap_err();
        assert!(matches!(e, FlagError::Url { .. }), "{e}");
        let source = std::error::Error::source(&e).unwrap().to_string();
        assert!(source.contains("ftp"), "{source}");
    }

    #[test]
    fn vip_table_defaults_and_specs() {
        let v: VipProbes = toml::from_str(
            r#"
            prefix = "192.0.2.10/32"
            health = "https://localhost:6443/livez"
            ready = "https://localhost:6443/readyz"
            insecure = true
            fall = 2
            "#,
        )
        .unwrap();
        assert_eq!(
            (
                v.interval_ms,
                v.timeout_ms,
                v.fall,
                v.rise,
                v.expect_status,
                v.withdraw
            ),
            (2000, 1000, 2, 3, 200, false)
        );
        let specs = v.specs().unwrap();
        assert_eq!(specs.len(), 2);
        assert_eq!(specs[0].0, Kind::Health);
        assert_eq!(specs[0].1.url.path(), "/livez");
        assert_eq!(specs[1].0, Kind::Ready);
        assert!(specs[1].1.insecure);
        assert_eq!(specs[1].1.fall, 2);

        let v: VipProbes = toml::from_str("prefix = \"192.0.2.11/32\"").unwrap();
        assert!(v.specs().unwrap().is_empty());

        // An https probe without trust is refused by `specs`.
        let v: VipProbes =
            toml::from_str("prefix = \"192.0.2.11/32\"\nready = \"https://h/\"").unwrap();
        assert!(matches!(v.specs(), Err(SpecError::NoTrust { .. })));
        // Unknown keys and bad prefixes are refused by the parser.
        let e = toml::from_str::<VipProbes>("prefix = \"192.0.2.11/32\"\nhealthz = \"x\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("healthz"), "{e}");
        assert!(toml::from_str::<VipProbes>("prefix = \"192.0.2.11\"").is_err());
    }
}
