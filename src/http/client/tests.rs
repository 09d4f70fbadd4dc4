//! The client against fake servers on loopback and against the real one.

use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

use metrics_exporter_prometheus::PrometheusBuilder;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::{Address, ClientError, DEFAULT_TIMEOUT, get, get_limited, get_ok};

#[test]
fn endpoint_forms_accepted() {
    for (text, host, port, shown) in [
        (
            "http://127.0.0.1:7585",
            "127.0.0.1",
            7585,
            "http://127.0.0.1:7585",
        ),
        (
            "http://127.0.0.1:7585/",
            "127.0.0.1",
            7585,
            "http://127.0.0.1:7585",
        ),
        ("127.0.0.1:7585", "127.0.0.1", 7585, "http://127.0.0.1:7585"),
        (
            "HTTP://localhost:80",
            "localhost",
            80,
            "http://localhost:80",
        ),
        (
            "node-1.example.net:65535",
            "node-1.example.net",
            65535,
            "http://node-1.example.net:65535",
        ),
        ("[::1]:7585", "::1", 7585, "http://[::1]:7585"),
        ("http://[::1]:7585/", "::1", 7585, "http://[::1]:7585"),
        (
            "[2001:db8:0::1]:1",
            "2001:db8::1",
            1,
            "http://[2001:db8::1]:1",
        ),
        (
            "  127.0.0.1:7585\n",
            "127.0.0.1",
            7585,
            "http://127.0.0.1:7585",
        ),
    ] {
        let a: Address = text
            .parse()
            .unwrap_or_else(|e| panic!("{text:?} refused: {e}"));
        assert_eq!((a.host(), a.port()), (host, port), "{text:?}");
        assert_eq!(a.to_string(), shown, "{text:?}");
    }
    let d: Address = crate::http::DEFAULT_ENDPOINT.parse().expect("default");
    assert_eq!(d.to_string(), crate::http::DEFAULT_ENDPOINT);
}

#[test]
fn endpoint_forms_refused_with_the_reason() {
    for (text, why) in [
        ("https://127.0.0.1:7585", "https is not served"),
        ("ftp://127.0.0.1:7585", "scheme 'ftp'"),
        ("", "empty"),
        ("http://", "no host and port"),
        ("127.0.0.1", "no port"),
        ("http://127.0.0.1", "no port"),
        (":7585", "no host"),
        ("127.0.0.1:", "port ''"),
        ("127.0.0.1:0", "port '0'"),
        ("127.0.0.1:65536", "port '65536'"),
        ("127.0.0.1:+80", "port '+80'"),
        ("127.0.0.1:http", "port 'http'"),
        ("http://127.0.0.1:7585/status", "a path ('/status')"),
        ("127.0.0.1:7585//", "a path ('/')"),
        ("http://127.0.0.1:7585?x=1", "a query"),
        ("http://user@127.0.0.1:7585", "user information"),
        ("::1:7585", "needs brackets"),
        ("[::1:7585", "closing ']'"),
        ("[::1]", "no port after"),
        ("[::1]7585", "no port after"),
        ("[not-v6]:7585", "'not-v6' is not an IPv6 address"),
        ("bad_host:7585", "'bad_host' is not a host name"),
        ("a b:7585", "'a b' is not a host name"),
    ] {
        let e = text
            .parse::<Address>()
            .expect_err(&format!("{text:?} accepted"));
        let m = e.to_string();
        assert!(m.contains(why), "{text:?}: {m}");
        assert!(m.contains(&format!("endpoint '{text}'")), "{m}");
        assert!(m.contains("write http://HOST:PORT or HOST:PORT"), "{m}");
    }
}

/// Await `f`, failing the test if it hangs (a guard, not a measurement).
async fn guard<F: Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(30), f)
        .await
        .expect("hang guard: nothing happened within 30 s")
}

fn address(addr: SocketAddr) -> Address {
    addr.to_string().parse().expect("address")
}

/// A one-connection server: reads the request head, then writes `answer`
/// and closes. The head it read comes back from the handle.
async fn fake(answer: Vec<u8>) -> (Address, tokio::task::JoinHandle<String>) {
    let l = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let a = address(l.local_addr().expect("addr"));
    let task = tokio::spawn(async move {
        let (mut s, _) = l.accept().await.expect("accept");
        let head = read_head(&mut s).await;
        s.write_all(&answer).await.expect("write");
        s.shutdown().await.expect("shutdown");
        head
    });
    (a, task)
}

async fn read_head(s: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        assert_eq!(s.read(&mut b).await.expect("read"), 1, "early close");
        head.push(b[0]);
    }
    String::from_utf8(head).expect("utf-8 head")
}

#[tokio::test]
async fn get_sends_one_plain_get_and_reads_the_answer() {
    let (a, server) = fake(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
            .to_vec(),
    )
    .await;
    let r = guard(get(&a, "/status", DEFAULT_TIMEOUT))
        .await
        .expect("get");
    assert_eq!(r.status, 200);
    assert_eq!(&r.body[..], b"{}");
    assert_eq!(
        r.headers.get("content-type").map(|v| v.as_bytes()),
        Some(&b"application/json"[..])
    );
    let head = server.await.expect("server").to_ascii_lowercase();
    assert!(head.starts_with("get /status http/1.1\r\n"), "{head}");
    assert!(
        head.contains(&format!("host: {}\r\n", a.authority())),
        "{head}"
    );
    assert!(head.contains("connection: close\r\n"), "{head}");
}

#[tokio::test]
async fn a_body_without_length_is_read_to_the_close() {
    let (a, _server) =
        fake(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nall of it".to_vec()).await;
    let body = guard(get_ok(&a, "/status", DEFAULT_TIMEOUT))
        .await
        .expect("get");
    assert_eq!(&body[..], b"all of it");
}

#[tokio::test]
async fn a_non_200_answer_is_a_reply_from_get_and_an_error_from_get_ok() {
    let answer =
        b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 28\r\n\r\nnot ready: zebra not joined\n"
            .to_vec();
    let (a, _s) = fake(answer.clone()).await;
    let r = guard(get(&a, "/readyz", DEFAULT_TIMEOUT))
        .await
        .expect("get");
    assert_eq!(r.status, 503);
    assert_eq!(&r.body[..], b"not ready: zebra not joined\n");

    let (a, _s) = fake(answer).await;
    let e = guard(get_ok(&a, "/readyz", DEFAULT_TIMEOUT))
        .await
        .expect_err("503");
    assert!(
        matches!(e, ClientError::Status { status, .. } if status == 503),
        "{e:?}"
    );
    let m = e.to_string();
    assert!(m.contains(&format!("{a}/readyz answered 503")), "{m}");
    assert!(m.contains("not ready: zebra not joined"), "{m}");
    assert!(m.contains("retry, or use --oneshot"), "{m}");
}

#[tokio::test]
async fn a_server_that_answers_garbage_is_a_protocol_error() {
    let (a, _s) = fake(b"SSH-2.0-OpenSSH_9.6\r\n".to_vec()).await;
    let e = guard(get(&a, "/status", DEFAULT_TIMEOUT))
        .await
        .expect_err("garbage");
    assert!(matches!(e, ClientError::Protocol { .. }), "{e:?}");
    let m = e.to_string();
    assert!(
        m.contains(&format!("{a}/status did not answer in HTTP/1.1")),
        "{m}"
    );
    assert!(m.contains("check --endpoint"), "{m}");
}

#[tokio::test]
async fn a_server_that_closes_at_once_is_a_protocol_error() {
    let l = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let a = address(l.local_addr().expect("addr"));
    tokio::spawn(async move {
        let (mut s, _) = l.accept().await.expect("accept");
        let _ = read_head(&mut s).await;
    });
    let e = guard(get(&a, "/status", DEFAULT_TIMEOUT))
        .await
        .expect_err("closed");
    assert!(matches!(e, ClientError::Protocol { .. }), "{e:?}");
}

#[tokio::test]
async fn a_body_over_the_limit_is_refused() {
    let (a, _s) = fake(b"HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n0123456789A".to_vec()).await;
    let e = guard(get_limited(&a, "/metrics", DEFAULT_TIMEOUT, 10))
        .await
        .expect_err("too large");
    assert!(
        matches!(e, ClientError::TooLarge { limit: 10, .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains("exceeds 10 bytes"), "{e}");
    // At the limit exactly it is fine.
    let (a, _s) = fake(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789".to_vec()).await;
    let r = guard(get_limited(&a, "/metrics", DEFAULT_TIMEOUT, 10))
        .await
        .expect("at the limit");
    assert_eq!(r.body.len(), 10);
}

#[tokio::test]
async fn connection_refused_names_the_endpoint_and_the_remedy() {
    let l = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let a = address(l.local_addr().expect("addr"));
    drop(l);
    let e = guard(get(&a, "/status", DEFAULT_TIMEOUT))
        .await
        .expect_err("refused");
    assert!(
        matches!(&e, ClientError::Connect { error, .. } if error.kind() == std::io::ErrorKind::ConnectionRefused),
        "{e:?}"
    );
    let m = e.to_string();
    assert!(m.contains(&format!("cannot reach ribbridge at {a}")), "{m}");
    assert!(
        m.contains("is `ribbridge run` running? or use --oneshot"),
        "{m}"
    );
}

#[tokio::test]
async fn a_silent_server_is_a_timeout() {
    let l = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let a = address(l.local_addr().expect("addr"));
    let (held_tx, mut held_rx) = mpsc::channel(1);
    tokio::spawn(async move {
        let (s, _) = l.accept().await.expect("accept");
        // Hold the connection open, unanswered, until the test ends.
        held_tx.send(s).await.expect("hold");
    });
    let e = guard(get(&a, "/status", Duration::from_millis(50)))
        .await
        .expect_err("timeout");
    assert!(matches!(e, ClientError::Timeout { .. }), "{e:?}");
    let m = e.to_string();
    assert!(
        m.contains(&format!("no answer from {a}/status within 50ms")),
        "{m}"
    );
    held_rx.close();
}

#[tokio::test]
async fn a_bad_path_is_refused_before_connecting() {
    let a: Address = "127.0.0.1:9".parse().expect("address");
    for path in ["status", "", "/a b"] {
        let e = get(&a, path, DEFAULT_TIMEOUT).await.expect_err(path);
        assert!(matches!(e, ClientError::Path { .. }), "{path:?}: {e:?}");
    }
}

#[tokio::test]
async fn round_trip_with_the_real_server() {
    let listener = crate::http::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .expect("bind");
    let a = address(listener.local_addr().expect("addr"));
    let (status, mut status_rx) = mpsc::channel::<tokio::sync::oneshot::Sender<String>>(1);
    let (ready_tx, ready) = watch::channel((false, "starting".to_string()));
    tokio::spawn(async move {
        while let Some(reply) = status_rx.recv().await {
            let _ = reply.send(r#"{"ready":false}"#.into());
        }
    });
    let stop = CancellationToken::new();
    let served = tokio::spawn(crate::http::serve(
        listener,
        crate::http::Endpoint {
            status,
            ready,
            live: crate::http::Liveness::new(std::time::Duration::from_secs(3600)),
        },
        PrometheusBuilder::new().build_recorder().handle(),
        crate::http::DEFAULT_MAX_CONNECTIONS,
        stop.clone(),
    ));
    let body = guard(get_ok(&a, "/status", DEFAULT_TIMEOUT))
        .await
        .expect("status");
    assert_eq!(&body[..], br#"{"ready":false}"#);
    let e = guard(get_ok(&a, "/readyz", DEFAULT_TIMEOUT))
        .await
        .expect_err("not ready");
    assert!(
        e.to_string()
            .contains("answered 503 Service Unavailable: not ready: starting"),
        "{e}"
    );
    ready_tx.send((true, String::new())).expect("watch");
    let body = guard(get_ok(&a, "/readyz", DEFAULT_TIMEOUT))
        .await
        .expect("ready");
    assert_eq!(&body[..], b"ready\n");
    let e = guard(get_ok(&a, "/nowhere", DEFAULT_TIMEOUT))
        .await
        .expect_err("404");
    assert!(e.to_string().contains("check --endpoint"), "{e}");
    stop.cancel();
    guard(served).await.expect("serve ended");
}
