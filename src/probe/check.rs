//! One probe: a `GET` over TCP, or TLS over TCP, judged by the answer's
//! status; and the TLS client configurations a spec needs.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Empty;
use hyper::Request;
use hyper::header::{CONNECTION, HOST, USER_AGENT};
use hyper_util::rt::TokioIo;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::time::Instant;
use tokio_rustls::TlsConnector;

use super::{Outcome, ProbeSpec, Reason, Scheme};

/// The `User-Agent` of every probe.
const USER_AGENT_VALUE: &str = "ribbridge-probe";

/// The trust of `https` probes: a CA file's certificates, or none at all
/// (`insecure`). Cheap to clone; build it once per spec.
#[derive(Clone)]
pub struct TlsConfig {
    config: Arc<ClientConfig>,
    what: String,
}

impl fmt::Debug for TlsConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsConfig")
            .field("trust", &self.what)
            .finish()
    }
}

/// Why a [`TlsConfig`] could not be built; each names the file and what
/// to do.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// The CA file cannot be read.
    #[error("cannot read the probe CA file {}: check the path and its permissions", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the system said.
        #[source]
        error: io::Error,
    },
    /// The CA file is not PEM.
    #[error("the probe CA file {} is not PEM: give the CA certificates as -----BEGIN CERTIFICATE----- blocks", path.display())]
    Pem {
        /// The file.
        path: PathBuf,
        /// What the PEM reader said.
        #[source]
        error: rustls::pki_types::pem::Error,
    },
    /// The CA file holds no certificate.
    #[error("the probe CA file {} holds no certificate: give the CA certificates as -----BEGIN CERTIFICATE----- blocks", path.display())]
    Empty {
        /// The file.
        path: PathBuf,
    },
    /// A certificate of the CA file cannot be a trust anchor.
    #[error("the probe CA file {} holds a certificate that cannot be trusted as a CA: check that it is the CA's certificate", path.display())]
    Anchor {
        /// The file.
        path: PathBuf,
        /// What rustls said.
        #[source]
        error: rustls::Error,
    },
    /// The TLS library refused its own defaults (a bug, or a broken build).
    #[error("the TLS client cannot be configured (a bug: report it)")]
    Config(#[source] rustls::Error),
}

/// The one provider: ring's. rustls 0.23.48 deprecates it for its lack of
/// post-quantum key exchange; a probe carries a backend's status code on
/// the node or its network, nothing a recorded session would reveal later,
/// and ring builds with `cc` alone for the static image (aws-lc-rs, the
/// alternative, is a far larger C build).
#[allow(deprecated)]
fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

impl TlsConfig {
    /// The configuration `spec` needs: `None` for an `http` URL, one that
    /// trusts the CA file's certificates, or, `insecure`, any certificate.
    /// Reads the CA file now.
    pub fn for_spec(spec: &ProbeSpec) -> Result<Option<TlsConfig>, TlsError> {
        if spec.url.scheme() == Scheme::Http {
            return Ok(None);
        }
        match (&spec.ca_file, spec.insecure) {
            (_, true) => TlsConfig::insecure().map(Some),
            (Some(path), false) => TlsConfig::from_ca_file(path).map(Some),
            // `validate` refuses it; the probes then fail as `tls`.
            (None, false) => TlsConfig::with_roots(RootCertStore::empty(), "nothing").map(Some),
        }
    }

    /// Trust the CA certificates of a PEM file (other PEM blocks, a key
    /// say, are skipped).
    pub fn from_ca_file(path: &Path) -> Result<TlsConfig, TlsError> {
        let pem = std::fs::read(path).map_err(|error| TlsError::Read {
            path: path.to_path_buf(),
            error,
        })?;
        let mut roots = RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(&pem) {
            let cert = cert.map_err(|error| TlsError::Pem {
                path: path.to_path_buf(),
                error,
            })?;
            roots.add(cert).map_err(|error| TlsError::Anchor {
                path: path.to_path_buf(),
                error,
            })?;
        }
        if roots.is_empty() {
            return Err(TlsError::Empty {
                path: path.to_path_buf(),
            });
        }
        TlsConfig::with_roots(roots, &format!("ca_file {}", path.display()))
    }

    /// Trust any certificate, as `curl -k`: neither the chain nor the name
    /// is checked; the handshake's signatures are.
    pub fn insecure() -> Result<TlsConfig, TlsError> {
        let provider = provider();
        let verifier = Arc::new(AnyCertificate {
            algorithms: provider.signature_verification_algorithms,
        });
        let mut config = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(TlsError::Config)?
            .dangerous()
            .with_custom_certificate_verifier(verifier)
            .with_no_client_auth();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(TlsConfig {
            config: Arc::new(config),
            what: "insecure".to_string(),
        })
    }

    /// The rustls client configuration, for another HTTPS client of the
    /// crate (`cluster::query`) that trusts the same way.
    pub(crate) fn client_config(&self) -> Arc<ClientConfig> {
        self.config.clone()
    }

    /// What is trusted (`ca_file PATH`, `insecure`), for error messages.
    pub(crate) fn trust(&self) -> &str {
        &self.what
    }

    fn with_roots(roots: RootCertStore, what: &str) -> Result<TlsConfig, TlsError> {
        let mut config = ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(TlsError::Config)?
            .with_root_certificates(roots)
            .with_no_client_auth();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(TlsConfig {
            config: Arc::new(config),
            what: what.to_string(),
        })
    }
}

/// `insecure`'s verifier: every certificate passes; the handshake's
/// signatures are still checked with the provider's algorithms, so the
/// peer holds the key of the certificate it sent.
#[derive(Debug)]
struct AnyCertificate {
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// A failed probe: the reason (the metric label) and the detail (the log
/// line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Failure {
    pub(super) reason: Reason,
    pub(super) detail: String,
}

impl Failure {
    fn new(reason: Reason, detail: impl Into<String>) -> Failure {
        Failure {
            reason,
            detail: detail.into(),
        }
    }
}

/// One `GET` of `spec`'s URL under its timeout: the outcome and how long
/// it took. `tls` is [`TlsConfig::for_spec`]'s; an `https` probe without
/// one fails as [`Reason::Tls`]. Never fails otherwise: every error is an
/// outcome.
pub async fn probe_once(spec: &ProbeSpec, tls: Option<&TlsConfig>) -> (Outcome, Duration) {
    let (result, took) = attempt(spec, tls).await;
    let outcome = match result {
        Ok(()) => Outcome::Ok,
        Err(f) => Outcome::Fail(f.reason),
    };
    (outcome, took)
}

/// [`probe_once`] with the failure's detail.
pub(super) async fn attempt(
    spec: &ProbeSpec,
    tls: Option<&TlsConfig>,
) -> (Result<(), Failure>, Duration) {
    let start = Instant::now();
    let result = match tokio::time::timeout(spec.timeout(), exchange(spec, tls)).await {
        Ok(r) => r,
        Err(_) => Err(Failure::new(
            Reason::Timeout,
            format!("no answer within {} ms", spec.timeout_ms),
        )),
    };
    (result, start.elapsed())
}

async fn exchange(spec: &ProbeSpec, tls: Option<&TlsConfig>) -> Result<(), Failure> {
    let url = &spec.url;
    let tcp = TcpStream::connect((url.host(), url.port()))
        .await
        .map_err(|e| {
            let reason = match e.kind() {
                io::ErrorKind::ConnectionRefused => Reason::Refused,
                io::ErrorKind::TimedOut => Reason::Timeout,
                _ => Reason::Other,
            };
            Failure::new(reason, format!("connect: {e}"))
        })?;
    // Best effort: a small request, sent at once.
    let _ = tcp.set_nodelay(true);
    match url.scheme() {
        Scheme::Http => head(spec, tcp).await,
        Scheme::Https => {
            let tls = tls.ok_or_else(|| {
                Failure::new(Reason::Tls, "no TLS configuration for an https URL")
            })?;
            let name = ServerName::try_from(url.host().to_string())
                .map_err(|e| Failure::new(Reason::Tls, format!("server name: {e}")))?;
            let stream = TlsConnector::from(tls.config.clone())
                .connect(name, tcp)
                .await
                .map_err(|e| {
                    let reason = if tls_error(&e) {
                        Reason::Tls
                    } else {
                        Reason::Other
                    };
                    Failure::new(reason, format!("TLS handshake ({}): {e}", tls.what))
                })?;
            head(spec, stream).await
        }
    }
}

/// The error is (or wraps) a rustls error.
fn tls_error(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut next = Some(e);
    while let Some(e) = next {
        if e.is::<rustls::Error>() {
            return true;
        }
        if let Some(io) = e.downcast_ref::<io::Error>()
            && let Some(inner) = io.get_ref()
            && inner.is::<rustls::Error>()
        {
            return true;
        }
        next = e.source();
    }
    false
}

/// The request, and the answer's head: its status against the expected one.
async fn head<S>(spec: &ProbeSpec, io: S) -> Result<(), Failure>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let http = |e: hyper::Error| {
        let reason = if tls_error(&e) {
            Reason::Tls
        } else {
            Reason::Other
        };
        Failure::new(reason, format!("HTTP/1.1: {e}"))
    };
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(io))
        .await
        .map_err(http)?;
    let request = Request::get(spec.url.path())
        .header(HOST, spec.url.host_header())
        .header(USER_AGENT, USER_AGENT_VALUE)
        .header(CONNECTION, "close")
        .body(Empty::<Bytes>::new())
        .map_err(|e| Failure::new(Reason::Other, format!("request: {e}")))?;
    let mut conn = std::pin::pin!(conn);
    let mut send = std::pin::pin!(sender.send_request(request));
    // The connection ends once the answer's head is in with `Connection:
    // close` (and the answer is then waiting in `send`), or fails first.
    let answer = tokio::select! {
        biased;
        r = &mut send => r,
        c = &mut conn => match c {
            Ok(()) => send.await,
            Err(e) => return Err(http(e)),
        },
    }
    .map_err(http)?;
    // The head is all a probe reads: the body and the connection are
    // dropped here.
    let status = answer.status().as_u16();
    if status == spec.expect_status {
        Ok(())
    } else {
        Err(Failure::new(
            Reason::Status(status),
            format!("status {status}, expected {}", spec.expect_status),
        ))
    }
}

#[cfg(test)]
pub(super) mod tests {
    use std::convert::Infallible;
    use std::sync::atomic::{AtomicU16, Ordering};

    use hyper::service::service_fn;
    use hyper::{Response, StatusCode};
    use rustls::pki_types::PrivateKeyDer;
    use tokio::net::TcpListener;
    use tokio_rustls::TlsAcceptor;

    use super::*;

    /// A loopback HTTP/1.1 server answering every request with the status
    /// held in `status` (changeable while it runs); over TLS when given
    /// an acceptor. Returns its port.
    pub(in crate::probe) async fn serve(status: Arc<AtomicU16>, tls: Option<TlsAcceptor>) -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    return;
                };
                let status = status.clone();
                let tls = tls.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |req: Request<hyper::body::Incoming>| {
                        let code = status.load(Ordering::SeqCst);
                        let agent = req.headers().get(USER_AGENT).cloned();
                        async move {
                            let mut r = Response::new(http_body_util::Full::new(Bytes::from(
                                "a body the probe does not read",
                            )));
                            *r.status_mut() = StatusCode::from_u16(code).unwrap();
                            assert_eq!(agent.unwrap(), USER_AGENT_VALUE);
                            Ok::<_, Infallible>(r)
                        }
                    });
                    let http = hyper::server::conn::http1::Builder::new();
                    match tls {
                        None => {
                            let _ = http.serve_connection(TokioIo::new(tcp), service).await;
                        }
                        Some(acceptor) => {
                            if let Ok(s) = acceptor.accept(tcp).await {
                                let _ = http.serve_connection(TokioIo::new(s), service).await;
                            }
                        }
                    }
                });
            }
        });
        port
    }

    /// A self-signed certificate for localhost and 127.0.0.1: its PEM and
    /// an acceptor serving it.
    pub(in crate::probe) fn self_signed() -> (String, TlsAcceptor) {
        let rcgen::CertifiedKey { cert, signing_key } =
            rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()])
                .unwrap();
        let key = PrivateKeyDer::Pkcs8(signing_key.serialize_der().into());
        let config = rustls::ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![cert.der().clone()], key)
            .unwrap();
        (cert.pem(), TlsAcceptor::from(Arc::new(config)))
    }

    fn spec(url: &str) -> ProbeSpec {
        ProbeSpec {
            timeout_ms: 2000,
            interval_ms: 2000,
            ..ProbeSpec::parse(url).unwrap()
        }
    }

    fn code(n: u16) -> Arc<AtomicU16> {
        Arc::new(AtomicU16::new(n))
    }

    #[tokio::test]
    async fn http_200_is_ok() {
        let port = serve(code(200), None).await;
        let s = spec(&format!("http://127.0.0.1:{port}/healthz"));
        let (result, took) = attempt(&s, None).await;
        assert_eq!(result, Ok(()));
        assert!(took < s.timeout());
    }

    #[tokio::test]
    async fn http_503_is_a_status_failure_and_expect_status_is_honoured() {
        let port = serve(code(503), None).await;
        let s = spec(&format!("http://localhost:{port}/readyz"));
        let (r, _) = attempt(&s, None).await;
        let f = r.unwrap_err();
        assert_eq!(f.reason, Reason::Status(503));
        assert!(f.detail.contains("expected 200"), "{}", f.detail);
        let s = ProbeSpec {
            expect_status: 503,
            ..s
        };
        assert_eq!(probe_once(&s, None).await.0, Outcome::Ok);
    }

    #[tokio::test]
    async fn closed_port_is_refused() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        let s = spec(&format!("http://127.0.0.1:{port}/"));
        assert_eq!(probe_once(&s, None).await.0, Outcome::Fail(Reason::Refused));
    }

    #[tokio::test]
    async fn silent_server_is_a_timeout() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        // Accepts, then neither reads nor answers.
        let held = tokio::spawn(async move {
            let mut open = Vec::new();
            while let Ok((tcp, _)) = listener.accept().await {
                open.push(tcp);
            }
        });
        let s = ProbeSpec {
            timeout_ms: 200,
            ..spec(&format!("http://127.0.0.1:{port}/"))
        };
        let (outcome, took) = probe_once(&s, None).await;
        assert_eq!(outcome, Outcome::Fail(Reason::Timeout));
        assert!(took >= Duration::from_millis(200), "{took:?}");
        assert!(took < Duration::from_millis(1500), "{took:?}");
        // Over TLS too: the handshake never ends.
        let s = ProbeSpec {
            timeout_ms: 200,
            insecure: true,
            ..spec(&format!("https://127.0.0.1:{port}/"))
        };
        let tls = TlsConfig::for_spec(&s).unwrap();
        assert_eq!(
            probe_once(&s, tls.as_ref()).await.0,
            Outcome::Fail(Reason::Timeout)
        );
        held.abort();
    }

    #[tokio::test]
    async fn not_http_is_other() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            use tokio::io::AsyncWriteExt as _;
            while let Ok((mut tcp, _)) = listener.accept().await {
                let _ = tcp.write_all(b"SSH-2.0-OpenSSH_9.6\r\n").await;
            }
        });
        let s = spec(&format!("http://127.0.0.1:{port}/"));
        let (r, _) = attempt(&s, None).await;
        let f = r.unwrap_err();
        assert_eq!(f.reason, Reason::Other, "{}", f.detail);
    }

    #[tokio::test]
    async fn https_with_the_ca_file_is_ok() {
        let (pem, acceptor) = self_signed();
        let port = serve(code(200), Some(acceptor)).await;
        let dir = tempfile::tempdir().unwrap();
        let ca = dir.path().join("ca.pem");
        std::fs::write(&ca, pem).unwrap();
        for host in ["localhost", "127.0.0.1"] {
            let s = ProbeSpec {
                ca_file: Some(ca.clone()),
                ..spec(&format!("https://{host}:{port}/readyz"))
            };
            s.validate().unwrap();
            let tls = TlsConfig::for_spec(&s).unwrap();
            let (r, _) = attempt(&s, tls.as_ref()).await;
            assert_eq!(r, Ok(()), "{host}");
        }
    }

    #[tokio::test]
    async fn https_without_trust_fails_as_tls() {
        let (_, acceptor) = self_signed();
        let port = serve(code(200), Some(acceptor)).await;
        let s = spec(&format!("https://localhost:{port}/readyz"));
        // No configuration at all.
        assert_eq!(probe_once(&s, None).await.0, Outcome::Fail(Reason::Tls));
        // `for_spec` of a spec `validate` refuses: trusts nothing.
        let tls = TlsConfig::for_spec(&s).unwrap();
        assert_eq!(
            probe_once(&s, tls.as_ref()).await.0,
            Outcome::Fail(Reason::Tls)
        );
        // Another CA.
        let (other, _) = self_signed();
        let dir = tempfile::tempdir().unwrap();
        let ca = dir.path().join("other.pem");
        std::fs::write(&ca, other).unwrap();
        let s = ProbeSpec {
            ca_file: Some(ca),
            ..s
        };
        let tls = TlsConfig::for_spec(&s).unwrap();
        let (r, _) = attempt(&s, tls.as_ref()).await;
        let f = r.unwrap_err();
        assert_eq!(f.reason, Reason::Tls);
        assert!(f.detail.contains("other.pem"), "{}", f.detail);
    }

    #[tokio::test]
    async fn https_insecure_is_ok_and_status_still_counts() {
        let (_, acceptor) = self_signed();
        let status = code(200);
        let port = serve(status.clone(), Some(acceptor)).await;
        // A name the certificate does not hold: not checked either.
        let s = ProbeSpec {
            insecure: true,
            ..spec(&format!("https://127.0.0.1:{port}/readyz"))
        };
        s.validate().unwrap();
        let tls = TlsConfig::for_spec(&s).unwrap();
        assert_eq!(probe_once(&s, tls.as_ref()).await.0, Outcome::Ok);
        status.store(500, Ordering::SeqCst);
        assert_eq!(
            probe_once(&s, tls.as_ref()).await.0,
            Outcome::Fail(Reason::Status(500))
        );
    }

    #[tokio::test]
    async fn https_to_a_plain_http_server_fails_as_tls() {
        let port = serve(code(200), None).await;
        let s = ProbeSpec {
            insecure: true,
            ..spec(&format!("https://127.0.0.1:{port}/"))
        };
        let tls = TlsConfig::for_spec(&s).unwrap();
        assert_eq!(
            probe_once(&s, tls.as_ref()).await.0,
            Outcome::Fail(Reason::Tls)
        );
    }

    #[test]
    fn ca_file_errors_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.pem");
        let e = TlsConfig::from_ca_file(&missing).unwrap_err();
        assert!(matches!(e, TlsError::Read { .. }), "{e}");
        assert!(e.to_string().contains("missing.pem"), "{e}");

        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let e = TlsConfig::from_ca_file(&empty).unwrap_err();
        assert!(matches!(e, TlsError::Empty { .. }), "{e}");

        let broken = dir.path().join("broken.pem");
        std::fs::write(&broken, "-----BEGIN CERTIFICATE-----\nMIIB\n").unwrap();
        let e = TlsConfig::from_ca_file(&broken).unwrap_err();
        assert!(matches!(e, TlsError::Pem { .. }), "{e}");
        assert!(e.to_string().contains("broken.pem"), "{e}");

        let garbage = dir.path().join("garbage.pem");
        std::fs::write(
            &garbage,
            "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        let e = TlsConfig::from_ca_file(&garbage).unwrap_err();
        assert!(matches!(e, TlsError::Anchor { .. }), "{e}");
    }
}
