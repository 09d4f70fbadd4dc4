//! The client of the endpoint (`ribbridge status`): one GET per connection
//! over hyper's HTTP/1.1 client connection.
//!
//! Contract: [`Address`] accepts `http://HOST:PORT`, `http://HOST:PORT/`
//! and `HOST:PORT` (an IPv6 address in brackets, `[::1]:7585`) and refuses
//! anything else, `https` included, with a message that shows the accepted
//! forms. [`get`] connects, sends `GET PATH` with `Connection: close`, and
//! reads the whole answer, at most [`MAX_BODY`] bytes, all within the
//! caller's timeout; every error names the endpoint and says what to do.
//! No task of its own is spawned (a host name is resolved on tokio's
//! blocking pool, an address literal is not): the futures run on any tokio
//! runtime with I/O and time enabled, a current-thread one included, so
//! sync code can call
//!
//! ```no_run
//! # use std::time::Duration;
//! # use ribbridge::http::client;
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let endpoint: client::Address = "127.0.0.1:7585".parse()?;
//! let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
//! let json = rt.block_on(client::get_ok(&endpoint, "/status", client::DEFAULT_TIMEOUT))?;
//! # let _ = json;
//! # Ok(())
//! # }
//! ```

use std::fmt;
use std::io;
use std::net::Ipv6Addr;
use std::str::FromStr;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Empty, LengthLimitError, Limited};
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// The largest answer body [`get`] reads: 16 MiB.
pub const MAX_BODY: usize = 16 << 20;

/// A timeout that suits the daemon on the same host.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// Boxed error of a body read (hyper's, or the size limit's).
type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A parsed endpoint: host (name, IPv4 or IPv6 address) and port.
/// Displays as `http://HOST:PORT`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Address {
    host: String,
    port: u16,
}

impl Address {
    /// The host name or address, without brackets.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `HOST:PORT`, an IPv6 address in brackets: the `Host` header.
    pub fn authority(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "http://{}", self.authority())
    }
}

/// An endpoint text that [`Address`] does not accept.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "endpoint '{text}': {why}; write http://HOST:PORT or HOST:PORT (IPv6 as [ADDR]:PORT), e.g. {default}",
    default = super::DEFAULT_ENDPOINT
)]
pub struct EndpointError {
    /// The text as given.
    pub text: String,
    /// What is wrong with it.
    pub why: String,
}

impl FromStr for Address {
    type Err = EndpointError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        parse(text.trim()).map_err(|Refused(why)| EndpointError {
            text: text.to_string(),
            why,
        })
    }
}

/// Why an endpoint text is refused (the `why` of [`EndpointError`]).
#[derive(Debug)]
struct Refused(String);

impl<T: Into<String>> From<T> for Refused {
    fn from(why: T) -> Refused {
        Refused(why.into())
    }
}

fn parse(t: &str) -> Result<Address, Refused> {
    if t.is_empty() {
        return Err("it is empty".into());
    }
    let rest = match t.split_once("://") {
        None => t,
        Some((scheme, rest)) => match scheme.to_ascii_lowercase().as_str() {
            "http" => rest,
            "https" => {
                return Err(
                    "https is not served: the endpoint speaks plain HTTP (on loopback by default)"
                        .into(),
                );
            }
            other => return Err(format!("scheme '{other}' is not supported").into()),
        },
    };
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    if let Some(i) = rest.find('/') {
        return Err(format!("a path ('{}') is not part of the endpoint", &rest[i..]).into());
    }
    if rest.contains(['?', '#']) {
        return Err("a query or fragment is not part of the endpoint".into());
    }
    if rest.contains('@') {
        return Err("user information is not supported".into());
    }
    if rest.is_empty() {
        return Err("no host and port".into());
    }
    let (host, port) = if let Some(r) = rest.strip_prefix('[') {
        let (v6, after) = r
            .split_once(']')
            .ok_or("an IPv6 address misses its closing ']'")?;
        let v6: Ipv6Addr = v6
            .parse()
            .map_err(|_| format!("'{v6}' is not an IPv6 address"))?;
        let port = after
            .strip_prefix(':')
            .ok_or(format!("no port after '[{v6}]'"))?;
        (v6.to_string(), port)
    } else {
        let (host, port) = rest.rsplit_once(':').ok_or("no port")?;
        if host.contains(':') {
            return Err("an IPv6 address needs brackets, as in [::1]:7585".into());
        }
        if host.is_empty() {
            return Err("no host".into());
        }
        if !host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.')
        {
            return Err(format!("'{host}' is not a host name or an IPv4 address").into());
        }
        (host.to_string(), port)
    };
    let port = match port.parse::<u16>() {
        Ok(p) if p != 0 && port.bytes().all(|b| b.is_ascii_digit()) => p,
        _ => return Err(format!("port '{port}' is not a number from 1 to 65535").into()),
    };
    Ok(Address { host, port })
}

/// An answer, whatever its status.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The status code.
    pub status: StatusCode,
    /// The answer's headers.
    pub headers: HeaderMap,
    /// The whole body, at most [`MAX_BODY`] bytes.
    pub body: Bytes,
}

/// Why [`get`] got no answer, or [`get_ok`] no success. Every message names
/// the endpoint and says what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The endpoint text is not accepted.
    #[error(transparent)]
    Endpoint(#[from] EndpointError),
    /// The caller asked for a path that is not an origin path.
    #[error("'{path}' is not a path of the endpoint: it must start with '/' (a bug in the caller)")]
    Path {
        /// The path given.
        path: String,
    },
    /// No TCP connection (refused, unreachable, a name that does not
    /// resolve).
    #[error(
        "cannot reach ribbridge at {endpoint}: {error} (is `ribbridge run` running? or use --oneshot)"
    )]
    Connect {
        /// The endpoint.
        endpoint: Address,
        /// What the operating system said.
        error: io::Error,
    },
    /// The whole exchange took longer than the timeout.
    #[error(
        "no answer from {endpoint}{path} within {after:?} (is the daemon stuck? retry, or use --oneshot)"
    )]
    Timeout {
        /// The endpoint.
        endpoint: Address,
        /// The path asked for.
        path: String,
        /// The timeout.
        after: Duration,
    },
    /// The peer did not speak HTTP/1.1, or the connection broke mid-answer.
    #[error(
        "{endpoint}{path} did not answer in HTTP/1.1 ({chain}): is another program listening there? check --endpoint",
        chain = chain(.error.as_ref())
    )]
    Protocol {
        /// The endpoint.
        endpoint: Address,
        /// The path asked for.
        path: String,
        /// hyper's error.
        error: BoxError,
    },
    /// The answer's body is larger than [`MAX_BODY`].
    #[error(
        "the answer of {endpoint}{path} exceeds {limit} bytes: is that a ribbridge endpoint? check --endpoint"
    )]
    TooLarge {
        /// The endpoint.
        endpoint: Address,
        /// The path asked for.
        path: String,
        /// The limit, bytes.
        limit: usize,
    },
    /// [`get_ok`]: the answer is not 200.
    #[error("{endpoint}{path} answered {status}: {detail} ({hint})", hint = hint(*.status))]
    Status {
        /// The endpoint.
        endpoint: Address,
        /// The path asked for.
        path: String,
        /// The status code.
        status: StatusCode,
        /// The first line of the body, as the daemon explains itself.
        detail: String,
    },
}

fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut cur = e.source();
    while let Some(s) = cur {
        out.push_str(": ");
        out.push_str(&s.to_string());
        cur = s.source();
    }
    out
}

fn hint(status: StatusCode) -> &'static str {
    match status {
        StatusCode::SERVICE_UNAVAILABLE => {
            "the daemon is starting, busy or stopping: retry, or use --oneshot"
        }
        StatusCode::NOT_FOUND => "is that a ribbridge endpoint? check --endpoint",
        _ => "is that a ribbridge endpoint of this version? check --endpoint",
    }
}

/// GET `path` (such as `/status`) from `endpoint`: the answer, whatever its
/// status, with the whole body. Connecting, sending and reading all happen
/// within `timeout`.
pub async fn get(endpoint: &Address, path: &str, timeout: Duration) -> Result<Reply, ClientError> {
    get_limited(endpoint, path, timeout, MAX_BODY).await
}

/// [`get`], and a 200 answer's body; any other status is
/// [`ClientError::Status`] with the first line of the body, which is
/// where the daemon says why (`not ready: ...`, `busy; retry`).
pub async fn get_ok(
    endpoint: &Address,
    path: &str,
    timeout: Duration,
) -> Result<Bytes, ClientError> {
    let reply = get(endpoint, path, timeout).await?;
    if reply.status == StatusCode::OK {
        return Ok(reply.body);
    }
    let text = String::from_utf8_lossy(&reply.body);
    let line = text.lines().next().unwrap_or("").trim();
    let detail = match line.char_indices().nth(200) {
        _ if line.is_empty() => "(no explanation)".to_string(),
        Some((i, _)) => format!("{}...", &line[..i]),
        None => line.to_string(),
    };
    Err(ClientError::Status {
        endpoint: endpoint.clone(),
        path: path.to_string(),
        status: reply.status,
        detail,
    })
}

async fn get_limited(
    endpoint: &Address,
    path: &str,
    timeout: Duration,
    limit: usize,
) -> Result<Reply, ClientError> {
    if !path.starts_with('/') || path.contains(char::is_whitespace) {
        return Err(ClientError::Path { path: path.into() });
    }
    let request = Request::get(path)
        .header(header::HOST, endpoint.authority())
        .header(header::CONNECTION, HeaderValue::from_static("close"))
        .header(
            header::USER_AGENT,
            concat!("ribbridge/", env!("CARGO_PKG_VERSION")),
        )
        .body(Empty::<Bytes>::new())
        .map_err(|_| ClientError::Path { path: path.into() })?;
    tokio::time::timeout(timeout, exchange(endpoint, path, request, limit))
        .await
        .unwrap_or_else(|_| {
            Err(ClientError::Timeout {
                endpoint: endpoint.clone(),
                path: path.into(),
                after: timeout,
            })
        })
}

async fn exchange(
    endpoint: &Address,
    path: &str,
    request: Request<Empty<Bytes>>,
    limit: usize,
) -> Result<Reply, ClientError> {
    let protocol = |error: BoxError| ClientError::Protocol {
        endpoint: endpoint.clone(),
        path: path.into(),
        error,
    };
    let tcp = TcpStream::connect((endpoint.host(), endpoint.port()))
        .await
        .map_err(|error| ClientError::Connect {
            endpoint: endpoint.clone(),
            error,
        })?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
        .await
        .map_err(|e| protocol(e.into()))?;
    // The exchange owns the sender: when it ends, the connection ends too.
    let talk = async move {
        let answer = sender
            .send_request(request)
            .await
            .map_err(|e| protocol(e.into()))?;
        let (parts, body) = answer.into_parts();
        let body = Limited::new(body, limit)
            .collect()
            .await
            .map_err(|e| {
                if e.is::<LengthLimitError>() {
                    ClientError::TooLarge {
                        endpoint: endpoint.clone(),
                        path: path.into(),
                        limit,
                    }
                } else {
                    protocol(e)
                }
            })?
            .to_bytes();
        Ok(Reply {
            status: parts.status,
            headers: parts.headers,
            body,
        })
    };
    let (reply, ended) = tokio::join!(talk, conn);
    match (reply, ended) {
        // The connection's own error says more than "connection closed".
        (Err(ClientError::Protocol { .. }), Err(e)) => Err(protocol(e.into())),
        (reply, _) => reply,
    }
}

#[cfg(test)]
mod tests;
