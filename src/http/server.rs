//! The endpoint's server side on hyper 1: the accept loop, one task per
//! connection, the limits, and the routing of the four paths. The contract
//! is in the parent module's documentation.

use std::collections::{BTreeMap, HashMap};
use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::{Body as _, Incoming};
use hyper::header::{self, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use metrics_exporter_prometheus::PrometheusHandle;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// The endpoint's handles on the owner loop.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// Ask for `/status`; the reply carries the JSON. Bounded: when it is
    /// full, `/status` answers 503 at once.
    pub status: mpsc::Sender<oneshot::Sender<String>>,
    /// (ready, why not), as the owner loop last set it; `/readyz` reads it.
    pub ready: watch::Receiver<(bool, String)>,
    /// The owner's heartbeat and the supervisor's verdict; `/healthz`
    /// reads it.
    pub live: super::Liveness,
}

/// What `/metrics` answers: the catalogue's text, rendered at each scrape.
/// A function rather than the exporter's handle, so that the catalogue can
/// add series the exporter cannot remove (a forgotten VIP's or router's).
#[derive(Clone)]
pub struct Metrics(Arc<dyn Fn() -> String + Send + Sync>);

impl Metrics {
    /// `/metrics` answers what `render` returns.
    pub fn new(render: impl Fn() -> String + Send + Sync + 'static) -> Metrics {
        Metrics(Arc::new(render))
    }

    fn render(&self) -> String {
        (self.0)()
    }
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Metrics(..)")
    }
}

impl From<PrometheusHandle> for Metrics {
    fn from(h: PrometheusHandle) -> Metrics {
        Metrics::new(move || h.render())
    }
}

/// Why [`bind`] could not listen. Every message names the address and
/// what to do about it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BindError {
    /// Something already listens on the address.
    #[error(
        "cannot listen on {addr}: port in use (another ribbridge?): stop it, or choose another address with --listen"
    )]
    InUse {
        /// The address asked for.
        addr: SocketAddr,
    },
    /// The process may not bind that port.
    #[error(
        "cannot listen on {addr}: permission denied (a port below 1024 needs CAP_NET_BIND_SERVICE): choose a port of 1024 or above with --listen"
    )]
    Denied {
        /// The address asked for.
        addr: SocketAddr,
    },
    /// No local interface holds the address.
    #[error(
        "cannot listen on {addr}: no local interface has this address: choose one of this host's addresses with --listen (default {default})",
        default = super::DEFAULT_LISTEN
    )]
    NotLocal {
        /// The address asked for.
        addr: SocketAddr,
    },
    /// Any other error of the socket calls.
    #[error("cannot listen on {addr}: {error}: choose another address with --listen")]
    Io {
        /// The address asked for.
        addr: SocketAddr,
        /// What the operating system said.
        error: io::Error,
    },
}

/// The daemon's start-up path still reports errors as `String`; this lets
/// `bind(..).await?` flow into it unchanged.
/// Bind the listener, with an error that names the address and says what
/// to do.
pub async fn bind(addr: SocketAddr) -> Result<TcpListener, BindError> {
    TcpListener::bind(addr)
        .await
        .map_err(|error| match error.kind() {
            io::ErrorKind::AddrInUse => BindError::InUse { addr },
            io::ErrorKind::PermissionDenied => BindError::Denied { addr },
            io::ErrorKind::AddrNotAvailable => BindError::NotLocal { addr },
            _ => BindError::Io { addr, error },
        })
}

/// The server's limits; tests shorten the timeouts.
#[derive(Debug, Clone, Copy)]
struct Limits {
    /// The whole request head must arrive within this.
    header_read: Duration,
    /// The request head (request line and headers) must fit in this.
    max_head: usize,
    /// How long `/status` waits for the owner loop.
    status_reply: Duration,
    /// How long an open connection may take to finish once `stop` fires.
    shutdown_grace: Duration,
    /// Pause after a failed `accept` (for instance out of descriptors), so
    /// that the loop does not spin.
    accept_pause: Duration,
    /// Connections open at once (`--http-max-connections`): each holds a
    /// descriptor, and the daemon's own sockets (netlink, ZAPI, vty) need
    /// theirs whoever connects here.
    max_connections: usize,
}

const LIMITS: Limits = Limits {
    header_read: Duration::from_secs(5),
    max_head: 8 * 1024,
    status_reply: Duration::from_secs(5),
    shutdown_grace: Duration::from_millis(500),
    accept_pause: ACCEPT_PAUSE,
    max_connections: DEFAULT_MAX_CONNECTIONS,
};

/// The endpoint's connection cap when nothing says otherwise: a scraper,
/// two probes and a few people's `ribbridge status` need a handful; the
/// rest of a 1 024-descriptor budget stays the daemon's.
pub const DEFAULT_MAX_CONNECTIONS: usize = 64;

/// How long a listener pauses after a failed `accept`.
pub const ACCEPT_PAUSE: Duration = Duration::from_millis(100);

/// A listener's failed accepts (out of descriptors: EMFILE, ENFILE; out of
/// memory): each counted in `ribbridge_accept_errors_total{listener}`,
/// followed by a pause so that the loop does not spin on a backlog it
/// cannot take, and logged once per episode (the first failure after an
/// accept that worked) rather than ten times a second.
#[derive(Debug)]
pub struct AcceptFailures {
    listener: &'static str,
    /// Failures in the episode under way, if one is.
    episode: Option<u64>,
}

impl AcceptFailures {
    /// For the listener named `listener` in the metric (`http`, `bmp`).
    pub fn new(listener: &'static str) -> AcceptFailures {
        AcceptFailures {
            listener,
            episode: None,
        }
    }

    /// An accept failed: count it, log it if it opens an episode; the
    /// caller then pauses for [`ACCEPT_PAUSE`].
    pub fn failed(&mut self, error: &io::Error) {
        crate::telemetry::accept_error(self.listener);
        match &mut self.episode {
            Some(n) => *n += 1,
            None => {
                self.episode = Some(1);
                tracing::warn!(listener = self.listener, %error, "accept failed; pausing {ACCEPT_PAUSE:?} after each failure until an accept works (logged once per episode; counted in ribbridge_accept_errors_total): if it says too many open files, raise the descriptor limit (LimitNOFILE=, ulimit -n) or lower the connection caps");
            }
        }
    }

    /// An accept worked: an episode under way ends, and says how long it was.
    pub fn accepted(&mut self) {
        if let Some(n) = self.episode.take() {
            tracing::info!(listener = self.listener, failures = n, "accepting again");
        }
    }
}

/// hyper's smallest read buffer; the head limit itself is `max_head`.
const READ_BUFFER: usize = 16 * 1024;

const TEXT: &str = "text/plain";
const PROMETHEUS: &str = "text/plain; version=0.0.4";
const JSON: &str = "application/json";

/// Serve until `stop` is cancelled: then accept nothing more, give open
/// connections a short grace to finish their answer, and return.
///
/// At most `max_connections` are open at once. A connection over the cap
/// sheds the oldest one still sending its request head (an idle
/// connection costs a descriptor and gives nothing, so a flood of them
/// never locks out `/healthz`); when every open one is being answered the
/// new one is closed instead. Both count in `ribbridge_http_shed_total`.
pub async fn serve(
    listener: TcpListener,
    shared: Endpoint,
    metrics: impl Into<Metrics>,
    max_connections: usize,
    stop: CancellationToken,
) {
    let limits = Limits {
        max_connections: max_connections.max(1),
        ..LIMITS
    };
    serve_with(listener, shared, metrics, stop, limits).await;
}

/// A connection's task ended (`done`): it is no longer open.
fn ended(
    done: &Result<(tokio::task::Id, ()), tokio::task::JoinError>,
    open: &mut BTreeMap<u64, Open>,
    seq_of: &mut HashMap<tokio::task::Id, u64>,
) {
    let id = match done {
        Ok((id, ())) => *id,
        Err(e) => e.id(),
    };
    if let Some(seq) = seq_of.remove(&id) {
        open.remove(&seq);
    }
}

/// One open connection as the accept loop sees it.
#[derive(Debug)]
struct Open {
    /// Cancelled to shed it.
    shed: CancellationToken,
    /// Set once its request head is read (the service was called).
    answering: Arc<AtomicBool>,
}

/// Make room for one more connection in `open` (keyed by accept order):
/// shed the oldest still reading its head; false when every one is
/// being answered.
fn make_room(open: &mut BTreeMap<u64, Open>) -> bool {
    let idle = open
        .iter()
        .find(|(_, o)| !o.answering.load(Ordering::Acquire))
        .map(|(seq, _)| *seq);
    match idle.and_then(|seq| open.remove(&seq)) {
        Some(o) => {
            o.shed.cancel();
            true
        }
        None => false,
    }
}

async fn serve_with(
    listener: TcpListener,
    shared: Endpoint,
    metrics: impl Into<Metrics>,
    stop: CancellationToken,
    limits: Limits,
) {
    let metrics = metrics.into();
    let mut h1 = http1::Builder::new();
    h1.timer(TokioTimer::new())
        .header_read_timeout(limits.header_read)
        .max_header_size(limits.max_head)
        .max_buf_size(READ_BUFFER.max(limits.max_head))
        .keep_alive(false)
        .title_case_headers(true);
    let app = Arc::new(App {
        shared,
        metrics,
        limits,
    });
    let mut conns = JoinSet::new();
    // The connections that may be shed, by accept order (a shed one
    // leaves at once); every connection's task is in `conns` until it
    // ends, and `conns` is what the cap counts: a descriptor is free only
    // once its task has dropped it.
    let mut open: BTreeMap<u64, Open> = BTreeMap::new();
    let mut seq_of: HashMap<tokio::task::Id, u64> = HashMap::new();
    let mut next: u64 = 0;
    let mut failures = AcceptFailures::new("http");
    loop {
        let (stream, peer) = tokio::select! {
            _ = stop.cancelled() => break,
            Some(done) = conns.join_next_with_id(), if !conns.is_empty() => {
                ended(&done, &mut open, &mut seq_of);
                continue;
            }
            r = listener.accept() => match r {
                Ok(c) => {
                    failures.accepted();
                    c
                }
                Err(e) => {
                    failures.failed(&e);
                    tokio::select! {
                        _ = stop.cancelled() => break,
                        _ = tokio::time::sleep(limits.accept_pause) => continue,
                    }
                }
            },
        };
        if conns.len() >= limits.max_connections {
            crate::telemetry::http_shed();
            if !make_room(&mut open) {
                tracing::debug!(%peer, "http: at the connection cap, every connection answering: closed");
                drop(stream);
                continue;
            }
            // Wait for a task to end (the shed one's ends at its next
            // poll) so that the descriptors held never pass the cap: a
            // listener with a full backlog would otherwise accept a
            // hundred more before the shed tasks run.
            while conns.len() >= limits.max_connections {
                match conns.join_next_with_id().await {
                    Some(done) => ended(&done, &mut open, &mut seq_of),
                    None => break,
                }
            }
        }
        let answering = Arc::new(AtomicBool::new(false));
        let shed = CancellationToken::new();
        let app = Arc::clone(&app);
        let flag = Arc::clone(&answering);
        let service = service_fn(move |req| {
            flag.store(true, Ordering::Release);
            let app = Arc::clone(&app);
            async move { Ok::<_, Infallible>(app.answer(req).await) }
        });
        let conn = h1.serve_connection(TokioIo::new(stream), service);
        let stop = stop.clone();
        let cut = shed.clone();
        let id = conns
            .spawn(async move {
                let mut conn = std::pin::pin!(conn);
                let ended = tokio::select! {
                    r = conn.as_mut() => r,
                    _ = cut.cancelled() => {
                        tracing::debug!(%peer, "http: shed at the connection cap (still sending its request)");
                        return;
                    }
                    _ = stop.cancelled() => {
                        conn.as_mut().graceful_shutdown();
                        match tokio::time::timeout(limits.shutdown_grace, conn.as_mut()).await {
                            Ok(r) => r,
                            Err(_) => {
                                tracing::debug!(%peer, "http: connection cut at shutdown");
                                return;
                            }
                        }
                    }
                };
                if let Err(e) = ended {
                    tracing::debug!(%peer, error = %e, "http: connection ended");
                }
            })
            .id();
        next += 1;
        seq_of.insert(id, next);
        open.insert(next, Open { shed, answering });
    }
    drop(listener);
    while conns.join_next().await.is_some() {}
}

/// What every connection shares.
#[derive(Debug)]
struct App {
    shared: Endpoint,
    metrics: Metrics,
    limits: Limits,
}

#[derive(Debug, Clone, Copy)]
enum Path {
    Metrics,
    Healthz,
    Readyz,
    Status,
}

impl App {
    /// Route one request: path, then method, then body.
    async fn answer(&self, req: Request<Incoming>) -> Response<Full<Bytes>> {
        let path = match req.uri().path() {
            "/metrics" => Path::Metrics,
            "/healthz" => Path::Healthz,
            "/readyz" => Path::Readyz,
            "/status" => Path::Status,
            _ => {
                return reply(
                    StatusCode::NOT_FOUND,
                    TEXT,
                    "not found: try /metrics /healthz /readyz /status\n",
                );
            }
        };
        if !matches!(*req.method(), Method::GET | Method::HEAD) {
            let mut r = reply(
                StatusCode::METHOD_NOT_ALLOWED,
                TEXT,
                "method not allowed: this endpoint answers GET and HEAD only\n",
            );
            r.headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
            return r;
        }
        if !req.body().is_end_stream() {
            return reply(
                StatusCode::PAYLOAD_TOO_LARGE,
                TEXT,
                "a request body is not accepted: send GET or HEAD without one\n",
            );
        }
        match path {
            Path::Metrics => reply(StatusCode::OK, PROMETHEUS, self.metrics.render()),
            Path::Healthz => match self.shared.live.check() {
                Ok(()) => reply(StatusCode::OK, TEXT, "ok\n"),
                Err(why) => reply(
                    StatusCode::SERVICE_UNAVAILABLE,
                    TEXT,
                    format!("not alive: {why}\n"),
                ),
            },
            Path::Readyz => {
                let (ready, why) = match self.shared.live.failed() {
                    Some(failed) => (false, failed),
                    None => self.shared.ready.borrow().clone(),
                };
                if ready {
                    reply(StatusCode::OK, TEXT, "ready\n")
                } else {
                    reply(
                        StatusCode::SERVICE_UNAVAILABLE,
                        TEXT,
                        format!("not ready: {why}\n"),
                    )
                }
            }
            Path::Status => self.status().await,
        }
    }

    /// `/status`: ask the owner loop, never wait for room in its channel.
    async fn status(&self) -> Response<Full<Bytes>> {
        let (tx, rx) = oneshot::channel();
        let why = match self.shared.status.try_send(tx) {
            Ok(()) => match tokio::time::timeout(self.limits.status_reply, rx).await {
                Ok(Ok(doc)) => return reply(StatusCode::OK, JSON, doc),
                Ok(Err(_)) => "the daemon loop is stopping".to_string(),
                Err(_) => format!(
                    "the daemon loop did not answer within {:?}; retry",
                    self.limits.status_reply
                ),
            },
            Err(mpsc::error::TrySendError::Full(_)) => {
                "the daemon loop is busy (its status queue is full); retry".to_string()
            }
            Err(mpsc::error::TrySendError::Closed(_)) => "the daemon loop is stopping".to_string(),
        };
        let mut r = reply(StatusCode::SERVICE_UNAVAILABLE, TEXT, format!("{why}\n"));
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        r
    }
}

fn reply(status: StatusCode, ctype: &'static str, body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(ctype));
    r
}

#[cfg(test)]
mod tests;
