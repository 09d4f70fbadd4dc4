//! The endpoint over real loopback sockets: raw requests, so that the bytes
//! on the wire (HEAD without a body, `Allow`, the close) are what is checked.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use metrics_exporter_prometheus::PrometheusBuilder;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::{BindError, Endpoint, LIMITS, Limits, bind, serve_with};

const DOC: &str = r#"{"frr_release":null,"mode":"observe","ready":true,"vips":[]}"#;

/// What the fake owner loop does with status requests.
#[derive(Debug, Clone, Copy)]
enum Owner {
    /// Answers every request with [`DOC`].
    Answers,
    /// Holds the receiver and never reads: a queue of one, already full.
    Full,
    /// Reads requests and drops them unanswered (the loop is stopping).
    Drops,
    /// Reads requests and keeps them unanswered.
    Silent,
}

struct Harness {
    addr: SocketAddr,
    ready: watch::Sender<(bool, String)>,
    live: crate::http::Liveness,
    stop: CancellationToken,
    served: JoinHandle<()>,
    _keep: Vec<Box<dyn std::any::Any + Send>>,
}

async fn start(owner: Owner, limits: Limits) -> Harness {
    let listener = bind(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("local addr");
    let recorder = PrometheusBuilder::new().build_recorder();
    metrics::with_local_recorder(&recorder, || {
        metrics::counter!("ribbridge_test_requests_total").increment(3);
    });
    let metrics = recorder.handle();
    let (ready, ready_rx) = watch::channel((false, "zebra not connected".to_string()));
    let live = crate::http::Liveness::new(std::time::Duration::from_secs(3600));
    let mut keep: Vec<Box<dyn std::any::Any + Send>> = vec![Box::new(recorder)];
    let (status, mut status_rx) = mpsc::channel::<oneshot::Sender<String>>(1);
    match owner {
        Owner::Answers => {
            tokio::spawn(async move {
                while let Some(reply) = status_rx.recv().await {
                    let _ = reply.send(DOC.to_string());
                }
            });
        }
        Owner::Full => {
            let (filler, pending) = oneshot::channel();
            status.try_send(filler).expect("room for one");
            keep.push(Box::new(status_rx));
            keep.push(Box::new(pending));
        }
        Owner::Drops => {
            tokio::spawn(async move { while status_rx.recv().await.is_some() {} });
        }
        Owner::Silent => {
            tokio::spawn(async move {
                let mut held = Vec::new();
                while let Some(reply) = status_rx.recv().await {
                    held.push(reply);
                }
            });
        }
    }
    let stop = CancellationToken::new();
    let served = tokio::spawn(serve_with(
        listener,
        Endpoint {
            status,
            ready: ready_rx,
            live: live.clone(),
        },
        metrics,
        stop.clone(),
        limits,
    ));
    Harness {
        addr,
        ready,
        live,
        stop,
        served,
        _keep: keep,
    }
}

/// Await `f`, failing the test if it hangs: a guard against a server that
/// never answers, not a measurement.
async fn guard<F: Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(30), f)
        .await
        .expect("hang guard: nothing happened within 30 s")
}

/// How the server ended the connection.
#[derive(Debug, PartialEq, Eq)]
enum Close {
    /// An orderly close (FIN).
    Eof,
    /// A reset (the server closed with unread input).
    Reset,
}

/// Everything the server sends until it closes the connection.
async fn read_to_close(s: &mut TcpStream) -> (Vec<u8>, Close) {
    guard(async {
        let mut out = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            match s.read(&mut buf).await {
                Ok(0) => return (out, Close::Eof),
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::ConnectionReset => {
                    return (out, Close::Reset);
                }
                Err(e) => panic!("read: {e}"),
            }
        }
    })
    .await
}

/// One parsed answer.
#[derive(Debug)]
struct Answer {
    code: u16,
    head: String,
    body: Vec<u8>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

fn parse(bytes: &[u8]) -> Answer {
    let end = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no head in {:?}", String::from_utf8_lossy(bytes)));
    let head = String::from_utf8_lossy(&bytes[..end]).into_owned();
    let code = head
        .strip_prefix("HTTP/1.1 ")
        .and_then(|r| r.get(..3))
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP/1.1 status line: {head}"));
    Answer {
        code,
        head,
        body: bytes[end + 4..].to_vec(),
    }
}

/// Send `request` as is; the answer, once the server has closed.
async fn raw(addr: SocketAddr, request: &str) -> Answer {
    let mut s = TcpStream::connect(addr).await.expect("connect");
    s.write_all(request.as_bytes()).await.expect("write");
    let (bytes, close) = read_to_close(&mut s).await;
    assert_eq!(close, Close::Eof, "{}", String::from_utf8_lossy(&bytes));
    parse(&bytes)
}

async fn get(addr: SocketAddr, method: &str, path: &str) -> Answer {
    raw(
        addr,
        &format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n"),
    )
    .await
}

#[tokio::test]
async fn metrics_is_prometheus_text() {
    let h = start(Owner::Answers, LIMITS).await;
    let a = get(h.addr, "GET", "/metrics").await;
    assert_eq!(a.code, 200, "{a:?}");
    assert_eq!(a.header("content-type"), Some("text/plain; version=0.0.4"));
    assert!(
        a.text().contains("ribbridge_test_requests_total 3"),
        "{}",
        a.text()
    );
}

#[tokio::test]
async fn healthz_is_ok() {
    let h = start(Owner::Answers, LIMITS).await;
    let a = get(h.addr, "GET", "/healthz").await;
    assert_eq!((a.code, a.text().as_str()), (200, "ok\n"));
    assert_eq!(a.header("content-type"), Some("text/plain"));
    assert_eq!(a.header("content-length"), Some("3"));
}

#[tokio::test]
async fn healthz_is_503_with_the_reason_once_a_task_failed() {
    let h = start(Owner::Answers, LIMITS).await;
    h.live.fail("kernel watcher ended: netlink socket closed");
    let a = get(h.addr, "GET", "/healthz").await;
    assert_eq!(
        (a.code, a.text().as_str()),
        (
            503,
            "not alive: kernel watcher ended: netlink socket closed\n"
        )
    );
    // Not ready either, whatever the owner last said: the process stops.
    h.ready.send_replace((true, String::new()));
    let r = get(h.addr, "GET", "/readyz").await;
    assert_eq!(
        (r.code, r.text().as_str()),
        (
            503,
            "not ready: kernel watcher ended: netlink socket closed\n"
        )
    );
}

#[tokio::test]
async fn every_answer_closes_the_connection() {
    let h = start(Owner::Answers, LIMITS).await;
    let a = get(h.addr, "GET", "/healthz").await;
    assert_eq!(a.header("connection"), Some("close"), "{}", a.head);
}

#[tokio::test]
async fn a_bare_request_line_without_host_is_answered() {
    // The lab's tests send exactly this through bash's /dev/tcp.
    let h = start(Owner::Answers, LIMITS).await;
    let a = raw(h.addr, "GET /healthz HTTP/1.1\r\n\r\n").await;
    assert_eq!(a.code, 200);
}

#[tokio::test]
async fn readyz_is_503_with_the_reason_then_200() {
    let h = start(Owner::Answers, LIMITS).await;
    let a = get(h.addr, "GET", "/readyz").await;
    assert_eq!(a.code, 503);
    assert_eq!(a.text(), "not ready: zebra not connected\n");
    h.ready.send((true, String::new())).expect("watch");
    let a = get(h.addr, "GET", "/readyz").await;
    assert_eq!((a.code, a.text().as_str()), (200, "ready\n"));
}

#[tokio::test]
async fn status_carries_the_owner_json() {
    let h = start(Owner::Answers, LIMITS).await;
    let a = get(h.addr, "GET", "/status").await;
    assert_eq!(a.code, 200);
    assert_eq!(a.header("content-type"), Some("application/json"));
    assert_eq!(a.text(), DOC);
}

#[tokio::test]
async fn status_is_503_at_once_when_the_owner_channel_is_full() {
    // The status timeout is far longer than the hang guard: an answer proves
    // the endpoint did not wait for room in the channel.
    let limits = Limits {
        status_reply: Duration::from_secs(3600),
        ..LIMITS
    };
    let h = start(Owner::Full, limits).await;
    let a = get(h.addr, "GET", "/status").await;
    assert_eq!(a.code, 503);
    assert!(a.text().contains("busy"), "{}", a.text());
    assert_eq!(a.header("retry-after"), Some("1"));
}

#[tokio::test]
async fn status_is_503_when_the_owner_drops_the_request() {
    let h = start(Owner::Drops, LIMITS).await;
    let a = get(h.addr, "GET", "/status").await;
    assert_eq!(a.code, 503);
    assert!(a.text().contains("stopping"), "{}", a.text());
}

#[tokio::test]
async fn status_is_503_when_the_owner_does_not_answer() {
    let limits = Limits {
        status_reply: Duration::from_millis(50),
        ..LIMITS
    };
    let h = start(Owner::Silent, limits).await;
    let a = get(h.addr, "GET", "/status").await;
    assert_eq!(a.code, 503);
    assert!(a.text().contains("did not answer"), "{}", a.text());
}

#[tokio::test]
async fn head_has_the_same_headers_and_no_body() {
    let h = start(Owner::Answers, LIMITS).await;
    h.ready.send((true, String::new())).expect("watch");
    for path in ["/metrics", "/healthz", "/readyz", "/status", "/nowhere"] {
        let g = get(h.addr, "GET", path).await;
        let hd = get(h.addr, "HEAD", path).await;
        assert_eq!(hd.code, g.code, "{path}");
        assert!(
            hd.body.is_empty(),
            "{path}: HEAD sent a body: {:?}",
            hd.text()
        );
        for name in ["content-type", "content-length"] {
            assert!(g.header(name).is_some(), "{path}: GET without {name}");
            assert_eq!(hd.header(name), g.header(name), "{path}: {name}");
        }
        assert_eq!(
            g.header("content-length"),
            Some(g.body.len().to_string().as_str()),
            "{path}"
        );
    }
}

#[tokio::test]
async fn other_methods_get_405_with_allow() {
    let h = start(Owner::Answers, LIMITS).await;
    for method in ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"] {
        for path in ["/metrics", "/healthz", "/readyz", "/status"] {
            let a = raw(
                h.addr,
                &format!("{method} {path} HTTP/1.1\r\nContent-Length: 0\r\n\r\n"),
            )
            .await;
            assert_eq!(a.code, 405, "{method} {path}");
            assert_eq!(a.header("allow"), Some("GET, HEAD"), "{method} {path}");
            // The wire spelling the lab's test greps for.
            assert!(a.head.contains("Allow: GET, HEAD"), "{}", a.head);
        }
    }
}

#[tokio::test]
async fn unknown_path_is_404() {
    let h = start(Owner::Answers, LIMITS).await;
    for (method, path) in [("GET", "/"), ("GET", "/metrics/x"), ("POST", "/admin")] {
        let a = get(h.addr, method, path).await;
        assert_eq!(a.code, 404, "{method} {path}");
        assert!(a.text().contains("/status"), "{}", a.text());
    }
}

#[tokio::test]
async fn the_query_string_is_ignored() {
    let h = start(Owner::Answers, LIMITS).await;
    let a = get(h.addr, "GET", "/healthz?verbose=1").await;
    assert_eq!((a.code, a.text().as_str()), (200, "ok\n"));
}

#[tokio::test]
async fn a_request_with_a_body_is_refused_with_413() {
    let h = start(Owner::Answers, LIMITS).await;
    // The head announces a body that is never sent: the refusal must not
    // wait for it.
    let a = raw(
        h.addr,
        "GET /status HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n",
    )
    .await;
    assert_eq!(a.code, 413);
    let a = raw(
        h.addr,
        "GET /status HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
    )
    .await;
    assert_eq!(a.code, 413);
}

/// Limits whose head timeout is short enough to wait for in a test.
fn impatient() -> Limits {
    Limits {
        header_read: Duration::from_millis(100),
        ..LIMITS
    }
}

#[tokio::test]
async fn a_slow_client_is_cut_off_without_an_answer() {
    let h = start(Owner::Answers, impatient()).await;
    let mut s = TcpStream::connect(h.addr).await.expect("connect");
    s.write_all(b"GET /metr").await.expect("write");
    // Await the server's close: it comes only from the head timeout.
    let (bytes, close) = read_to_close(&mut s).await;
    assert_eq!(close, Close::Eof);
    assert!(bytes.is_empty(), "{:?}", String::from_utf8_lossy(&bytes));
}

#[tokio::test]
async fn a_silent_client_is_cut_off() {
    let h = start(Owner::Answers, impatient()).await;
    let mut s = TcpStream::connect(h.addr).await.expect("connect");
    let (bytes, close) = read_to_close(&mut s).await;
    assert_eq!((bytes.len(), close), (0, Close::Eof));
}

#[tokio::test]
async fn an_oversized_head_gets_431_then_the_close() {
    let h = start(Owner::Answers, LIMITS).await;
    let filler = "a".repeat(LIMITS.max_head + 1);
    let request = format!("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Filler: {filler}\r\n\r\n");
    let mut s = TcpStream::connect(h.addr).await.expect("connect");
    // The server may close before it has read everything: a refused write
    // is fine, the answer is what counts.
    let _ = s.write_all(request.as_bytes()).await;
    // The close is orderly when the server read the whole head before it
    // answered, a reset when some of it was still unread: either is right.
    let (bytes, _close) = read_to_close(&mut s).await;
    let a = parse(&bytes);
    assert_eq!(a.code, 431, "{}", a.head);
    assert!(a.body.is_empty());
}

#[tokio::test]
async fn stop_ends_serve_and_closes_open_connections() {
    let h = start(Owner::Answers, LIMITS).await;
    let mut s = TcpStream::connect(h.addr).await.expect("connect");
    s.write_all(b"GET /hea").await.expect("write");
    // Make sure the server has accepted the connection before stopping.
    let probe = get(h.addr, "GET", "/healthz").await;
    assert_eq!(probe.code, 200);
    h.stop.cancel();
    guard(h.served).await.expect("serve ended cleanly");
    let (bytes, _) = read_to_close(&mut s).await;
    assert!(bytes.is_empty(), "{:?}", String::from_utf8_lossy(&bytes));
    let refused = TcpStream::connect(h.addr).await;
    assert!(refused.is_err(), "still listening after stop");
}

#[tokio::test]
async fn bind_names_the_address_when_the_port_is_in_use() {
    let first = bind(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .expect("bind");
    let addr = first.local_addr().expect("addr");
    let e = bind(addr).await.expect_err("second bind");
    assert!(
        matches!(e, BindError::InUse { addr: a } if a == addr),
        "{e:?}"
    );
    let m = e.to_string();
    assert!(m.contains(&addr.to_string()), "{m}");
    assert!(m.contains("another ribbridge?"), "{m}");
    assert!(m.contains("--listen"), "{m}");
}

#[tokio::test]
async fn bind_says_when_no_interface_has_the_address() {
    // TEST-NET-1 is never a local address.
    let addr = SocketAddr::from(([192, 0, 2, 1], 0));
    let e = bind(addr).await.expect_err("bind on a foreign address");
    assert!(matches!(e, BindError::NotLocal { .. }), "{e:?}");
    let m = e.to_string();
    assert!(m.contains("192.0.2.1:0") && m.contains("--listen"), "{m}");
}

#[test]
fn every_bind_error_names_the_address_and_the_flag() {
    let addr = SocketAddr::from(([127, 0, 0, 1], 80));
    for e in [
        BindError::InUse { addr },
        BindError::Denied { addr },
        BindError::NotLocal { addr },
        BindError::Io {
            addr,
            error: io::Error::other("boom"),
        },
    ] {
        let m = e.to_string();
        assert!(m.contains("127.0.0.1:80") && m.contains("--listen"), "{m}");
    }
}

#[tokio::test]
async fn over_the_cap_the_oldest_idle_connection_is_shed_and_healthz_answers() {
    // No head timeout within the test: a close can only be a shed.
    let limits = Limits {
        header_read: Duration::from_secs(3600),
        max_connections: 3,
        ..LIMITS
    };
    let h = start(Owner::Answers, limits).await;
    // Six idle connections, accepted in connect order: the last three shed
    // the first three.
    let mut idle = Vec::new();
    for _ in 0..6 {
        idle.push(TcpStream::connect(h.addr).await.expect("connect"));
    }
    // At the cap, a request sheds the oldest idle one left (the fourth).
    let a = get(h.addr, "GET", "/healthz").await;
    assert_eq!(a.code, 200, "healthz over the cap: {a:?}");
    for (i, s) in idle.iter_mut().take(4).enumerate() {
        let (bytes, close) = read_to_close(s).await;
        assert_eq!((bytes.len(), close), (0, Close::Eof), "idle {i} shed");
    }
    // The two youngest remain: with the answered one closed there is room
    // again, and a request is answered without shedding.
    let a = get(h.addr, "GET", "/healthz").await;
    assert_eq!(a.code, 200, "healthz under the cap: {a:?}");
    drop(idle);
}

#[test]
fn failed_accepts_are_one_episode_until_an_accept_works() {
    let mut f = super::AcceptFailures::new("http");
    let emfile = io::Error::from_raw_os_error(24);
    f.failed(&emfile);
    f.failed(&emfile);
    f.failed(&emfile);
    // Only the first of an episode logs; the count is what the end reports.
    assert_eq!(f.episode, Some(3));
    f.accepted();
    assert_eq!(f.episode, None);
    f.failed(&emfile);
    assert_eq!(f.episode, Some(1), "a new episode after an accept worked");
}
