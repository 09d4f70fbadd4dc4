//! The HTTP endpoint (`/metrics`, `/healthz`, `/readyz`, `/status`) and the
//! client that `ribbridge status` reads it with, both on hyper 1 (HTTP/1.1).
//!
//! # Contract of the endpoint ([`serve`])
//!
//! - Loopback by default ([`DEFAULT_LISTEN`]); one request per connection
//!   (no keep-alive: the answer ends with `Connection: close`).
//! - Paths: `/metrics` (Prometheus text, `text/plain; version=0.0.4`),
//!   `/healthz` (200 `ok`, or 503 `not alive: WHY` when the owner loop has
//!   not turned within its bound or an essential task ended: [`Liveness`]),
//!   `/readyz` (200 `ready`, or 503 `not ready: WHY`),
//!   `/status` (the owner loop's JSON, `application/json`; 503 at once when
//!   the loop's bounded status channel is full, or when it does not answer).
//!   The query string is ignored. Any other path: 404.
//! - Methods: GET and HEAD on every path (HEAD: the same status and headers,
//!   `Content-Length` included, and no body). Any other method: 405 with
//!   `Allow: GET, HEAD`. A request that carries a body: 413.
//! - Limits: the request head must arrive within 5 s and fit in 8 KiB;
//!   a slower client is disconnected without an answer, a larger head gets
//!   431 and the connection is closed. At most `--http-max-connections`
//!   (default [`DEFAULT_MAX_CONNECTIONS`]) are open at once: one over the
//!   cap sheds the oldest connection still sending its request head, or is
//!   itself closed when every open one is being answered
//!   (`ribbridge_http_shed_total`), so idle connections never take the
//!   descriptors the daemon's own sockets need nor lock out `/healthz`.
//!   A failed accept (out of descriptors) pauses the loop for
//!   [`ACCEPT_PAUSE`], is counted and logged once per episode
//!   ([`AcceptFailures`]).
//! - It never touches the core's state: `/status` asks the owner loop over a
//!   bounded channel (the loop builds the document only when asked),
//!   `/readyz` reads a watch the loop updates.
//! - It stops when the daemon's `CancellationToken` is cancelled: no new
//!   connection is accepted and open ones get at most half a second to
//!   finish their answer.
//!
//! # Contract of the client ([`client`])
//!
//! One GET per connection to an endpoint written `http://HOST:PORT`,
//! `http://HOST:PORT/` or `HOST:PORT` (IPv6 in brackets); `https` and
//! anything else is refused with a message that shows the accepted forms.
//! The answer's body is capped at 16 MiB and the whole exchange at a
//! caller-chosen timeout. It needs a tokio runtime with I/O and time enabled
//! and spawns no task of its own, so a current-thread runtime is enough.

pub mod client;
mod liveness;
mod server;

pub use liveness::{Liveness, LivenessError};
pub use server::{
    ACCEPT_PAUSE, AcceptFailures, BindError, DEFAULT_MAX_CONNECTIONS, Endpoint, Metrics, bind,
    serve,
};

/// Default listen address: loopback, port 7585. Outside 9000-9999, which
/// OpenShift opens between nodes (a loopback-only port belongs outside
/// it), and clear of frr-k8s (7572, 7573, 9123, 9140, 9141), kube-vip and
/// the host-port registry (docs/DEPLOY.md has the entry to file).
pub const DEFAULT_LISTEN: std::net::SocketAddr =
    std::net::SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 7585);
/// The same, as a URL for `ribbridge status` (a test keeps the two equal).
pub const DEFAULT_ENDPOINT: &str = "http://127.0.0.1:7585";

#[cfg(test)]
mod defaults {
    #[test]
    fn the_endpoint_is_the_listen_address() {
        assert_eq!(
            super::DEFAULT_ENDPOINT,
            format!("http://{}", super::DEFAULT_LISTEN)
        );
    }
}
