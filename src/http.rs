//! The HTTP endpoint: `/metrics`, `/healthz`, `/readyz`, `/status`.
//!
//! Contract: GET (and HEAD) only, one request per connection, a request head
//! of at most 8 KiB read within 5 s, loopback by default. It never touches
//! the core's state: `/status` asks the owner loop over a bounded channel
//! (the loop builds the document only when asked), `/readyz` reads a watch
//! the loop updates. A hand-written HTTP/1.1 subset keeps the surface
//! narrow: no body parsing, no keep-alive, no dependency beyond tokio.

use std::net::SocketAddr;
use std::time::Duration;

use metrics_exporter_prometheus::PrometheusHandle;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot, watch};
use tokio_util::sync::CancellationToken;

/// Default listen address: loopback, port 9774 (clear of 179, 1936, 7572,
/// 9140, 9141, 9342, 9445, 29445).
pub const DEFAULT_LISTEN: &str = "127.0.0.1:9774";
/// The same, as a URL for `ribbridge status`.
pub const DEFAULT_ENDPOINT: &str = "http://127.0.0.1:9774";

const MAX_HEAD: usize = 8 * 1024;
const READ_TIMEOUT: Duration = Duration::from_secs(5);

/// The endpoint's handles on the owner loop.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// Ask for `/status`; the reply carries the JSON.
    pub status: mpsc::Sender<oneshot::Sender<String>>,
    /// (ready, why not).
    pub ready: watch::Receiver<(bool, String)>,
}

/// Serve until `stop` is cancelled.
pub async fn serve(
    listener: TcpListener,
    shared: Endpoint,
    metrics: PrometheusHandle,
    stop: CancellationToken,
) {
    loop {
        let (conn, peer) = tokio::select! {
            _ = stop.cancelled() => return,
            r = listener.accept() => match r {
                Ok(c) => c,
                Err(e) => {
                    tracing::warn!(error = %e, "http: accept failed");
                    continue;
                }
            },
        };
        let shared = shared.clone();
        let metrics = metrics.clone();
        tokio::spawn(async move {
            if let Err(e) = handle(conn, &shared, &metrics).await {
                tracing::debug!(%peer, error = %e, "http: connection ended");
            }
        });
    }
}

/// Bind the listener, with an error that says what to do.
pub async fn bind(addr: SocketAddr) -> Result<TcpListener, String> {
    TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen on {addr}: {e} (choose another address with --listen)"))
}

async fn handle(
    mut conn: TcpStream,
    shared: &Endpoint,
    metrics: &PrometheusHandle,
) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(1024);
    let head_end = tokio::time::timeout(READ_TIMEOUT, async {
        loop {
            let mut chunk = [0u8; 1024];
            let n = conn.read(&mut chunk).await?;
            if n == 0 {
                return Ok::<Option<usize>, std::io::Error>(None);
            }
            buf.extend_from_slice(&chunk[..n]);
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                return Ok(Some(i));
            }
            if buf.len() > MAX_HEAD {
                return Ok(None);
            }
        }
    })
    .await
    .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, "request head timeout"))??;
    let Some(end) = head_end else {
        return respond(&mut conn, 400, "text/plain", "bad request\n", false).await;
    };
    let head = String::from_utf8_lossy(&buf[..end]);
    let mut parts = head.lines().next().unwrap_or("").split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let head_only = method == "HEAD";
    if method != "GET" && !head_only {
        return respond(&mut conn, 405, "text/plain", "only GET\n", false).await;
    }
    let path = target.split('?').next().unwrap_or("");
    match path {
        "/metrics" => {
            let body = metrics.render();
            respond(
                &mut conn,
                200,
                "text/plain; version=0.0.4",
                &body,
                head_only,
            )
            .await
        }
        "/healthz" => respond(&mut conn, 200, "text/plain", "ok\n", head_only).await,
        "/readyz" => {
            let (ready, why) = shared.ready.borrow().clone();
            if ready {
                respond(&mut conn, 200, "text/plain", "ready\n", head_only).await
            } else {
                respond(
                    &mut conn,
                    503,
                    "text/plain",
                    &format!("not ready: {why}\n"),
                    head_only,
                )
                .await
            }
        }
        "/status" => {
            let (tx, rx) = oneshot::channel();
            let body = match shared.status.try_send(tx) {
                Ok(()) => tokio::time::timeout(READ_TIMEOUT, rx)
                    .await
                    .ok()
                    .and_then(Result::ok),
                Err(_) => None,
            };
            match body {
                Some(b) => respond(&mut conn, 200, "application/json", &b, head_only).await,
                None => {
                    respond(
                        &mut conn,
                        503,
                        "text/plain",
                        "the daemon loop is busy or stopping; retry\n",
                        head_only,
                    )
                    .await
                }
            }
        }
        _ => {
            respond(
                &mut conn,
                404,
                "text/plain",
                "not found: try /metrics /healthz /readyz /status\n",
                head_only,
            )
            .await
        }
    }
}

async fn respond(
    conn: &mut TcpStream,
    code: u16,
    ctype: &str,
    body: &str,
    head_only: bool,
) -> std::io::Result<()> {
    let reason = match code {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        _ => "Service Unavailable",
    };
    let allow = if code == 405 {
        "Allow: GET, HEAD\r\n"
    } else {
        ""
    };
    let head = format!(
        "HTTP/1.1 {code} {reason}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n{allow}Connection: close\r\n\r\n",
        body.len()
    );
    conn.write_all(head.as_bytes()).await?;
    if !head_only {
        conn.write_all(body.as_bytes()).await?;
    }
    conn.shutdown().await
}
