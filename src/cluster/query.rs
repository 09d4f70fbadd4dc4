//! The Prometheus HTTP API client: instant queries (`GET /api/v1/query`)
//! over HTTP or HTTPS, as OpenShift's monitoring is reached (the Thanos
//! querier behind its route: a bearer token, the route's CA).
//!
//! Contract: [`Source::new`] checks the URL, reads the token file and the
//! CA file once (each error names the flag, the file and what to do);
//! [`Source::instant`] sends one query on its own connection, the whole
//! exchange within the source's timeout, and returns the answer's samples
//! or a [`QueryError`] naming the URL and what to do. [`parse_answer`] is
//! the pure part: the API's JSON to [`Sample`]s, `"NaN"` kept as NaN.
//! The transport is the crate's own: hyper's HTTP/1.1 client connection
//! over tokio, TLS by the probes' rustls configuration ([`TlsConfig`]).

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Empty, LengthLimitError, Limited};
use hyper::header::{ACCEPT, AUTHORIZATION, CONNECTION, HOST, HeaderValue, USER_AGENT};
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;
use rustls::pki_types::ServerName;
use serde::Deserialize;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

use crate::probe::{Scheme, TlsConfig, Url};

/// The largest answer read: 64 MiB (a cluster's every VIP on every node is
/// far less).
const MAX_BODY: usize = 64 << 20;

/// How to reach Prometheus, as the flags give it.
#[derive(Debug, Clone, Default)]
pub struct SourceOptions {
    /// `--prometheus`: the API's base URL (`http[s]://HOST[:PORT][/PREFIX]`).
    pub url: String,
    /// `--token-file`: a bearer token, sent as `Authorization: Bearer`.
    pub token_file: Option<PathBuf>,
    /// `--ca-file`: the CA certificates that sign the server's certificate.
    pub ca_file: Option<PathBuf>,
    /// `--insecure-skip-tls-verify`: no certificate check (as `curl -k`).
    pub insecure: bool,
    /// How long one query may take, connection included.
    pub timeout: Duration,
}

/// A Prometheus (or Thanos querier) to ask: its base URL, the token and
/// the trust, read once.
#[derive(Clone)]
pub struct Source {
    base: Url,
    token: Option<HeaderValue>,
    tls: Option<TlsConfig>,
    timeout: Duration,
}

impl std::fmt::Debug for Source {
    // The token stays out of every debug print.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Source")
            .field("base", &self.base.to_string())
            .field("token", &self.token.as_ref().map(|_| "(set)"))
            .field("tls", &self.tls)
            .finish()
    }
}

/// Why a [`Source`] cannot be built: each names the flag, what was wrong
/// and what to do.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// The URL does not parse.
    #[error(
        "--prometheus: {0} (e.g. http://prometheus:9090 or https://thanos-querier.openshift-monitoring.svc:9091)"
    )]
    Url(#[from] crate::probe::UrlError),
    /// A query string in the base URL.
    #[error(
        "--prometheus '{url}': give the base URL without a query ('?...'); ribbridge adds /api/v1/query"
    )]
    Query {
        /// The URL.
        url: String,
    },
    /// The token file cannot be read.
    #[error("--token-file {}: cannot read it ({error}): check the path and its permissions", path.display())]
    TokenRead {
        /// The file.
        path: PathBuf,
        /// What the system said.
        error: io::Error,
    },
    /// The token file is empty or not a header value.
    #[error("--token-file {}: {why}: write the token alone (e.g. `oc whoami -t > FILE`)", path.display())]
    Token {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: &'static str,
    },
    /// The CA file.
    #[error("--ca-file: {0}")]
    Ca(#[from] crate::probe::TlsError),
    /// https without any trust.
    #[error(
        "--prometheus {url} is https: give --ca-file (the CA that signs its certificate; on OpenShift, the service CA or the route's) or --insecure-skip-tls-verify"
    )]
    NoTrust {
        /// The URL.
        url: String,
    },
    /// Trust flags on a plain-HTTP URL.
    #[error(
        "--ca-file and --insecure-skip-tls-verify need an https --prometheus URL; {url} is http"
    )]
    TrustOnHttp {
        /// The URL.
        url: String,
    },
}

/// Why a query got no answer. Every message names the URL and says what
/// to do.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    /// No TCP connection.
    #[error(
        "cannot reach Prometheus at {url}: {error} (check --prometheus, and that this host may reach it)"
    )]
    Connect {
        /// The base URL.
        url: String,
        /// What the system said.
        error: io::Error,
    },
    /// The exchange took longer than the timeout.
    #[error(
        "no answer from Prometheus at {url} within {after:?} (overloaded or unreachable? retry, or raise --timeout)"
    )]
    Timeout {
        /// The base URL.
        url: String,
        /// The timeout.
        after: Duration,
    },
    /// The TLS handshake failed.
    #[error(
        "TLS with {url} failed (trusting {trust}): {detail} (check --ca-file: it must hold the CA that signs the server's certificate)"
    )]
    Tls {
        /// The base URL.
        url: String,
        /// What is trusted.
        trust: String,
        /// rustls' reason.
        detail: String,
    },
    /// Not HTTP/1.1, or the connection broke.
    #[error("{url} did not answer in HTTP/1.1 ({detail}): is it Prometheus? check --prometheus")]
    Http {
        /// The base URL.
        url: String,
        /// hyper's reason.
        detail: String,
    },
    /// A status other than 200 (and not a Prometheus error document).
    #[error("{url}/api/v1/query answered {status}: {detail} ({hint})", hint = status_hint(*.status))]
    Status {
        /// The base URL.
        url: String,
        /// The status.
        status: StatusCode,
        /// The first line of the body.
        detail: String,
    },
    /// The body is not an answer of the Prometheus API.
    #[error("{url}/api/v1/query: {why}: is that the Prometheus HTTP API? check --prometheus")]
    Answer {
        /// The base URL.
        url: String,
        /// What is wrong with the body.
        why: AnswerError,
    },
    /// Prometheus refused the query (`"status": "error"`).
    #[error("Prometheus at {url} refused `{query}`: {error_type}: {error}")]
    Refused {
        /// The base URL.
        url: String,
        /// The query.
        query: String,
        /// `errorType`.
        error_type: String,
        /// `error`.
        error: String,
    },
}

fn status_hint(s: StatusCode) -> &'static str {
    match s {
        StatusCode::UNAUTHORIZED => {
            "the token is missing or refused: give --token-file (e.g. `oc whoami -t > FILE`)"
        }
        StatusCode::FORBIDDEN => {
            "the token may not read metrics: grant its user cluster-monitoring-view (OpenShift) or the reader role"
        }
        StatusCode::NOT_FOUND => {
            "no Prometheus API there: --prometheus is the base URL, without /api/v1"
        }
        _ => "retry; if it persists, check Prometheus' own log",
    }
}

/// One sample of an instant vector: its labels, its timestamp (seconds
/// since the epoch, the evaluation time) and its value (NaN kept).
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// The series' labels, `__name__` included when Prometheus keeps it.
    pub labels: BTreeMap<String, String>,
    /// The evaluation time, seconds since the epoch.
    pub time: f64,
    /// The value.
    pub value: f64,
}

impl Sample {
    /// A label's value, `""` when absent (PromQL's own convention).
    pub fn label(&self, name: &str) -> &str {
        self.labels.get(name).map_or("", String::as_str)
    }
}

/// Why a body is not an instant query's answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnswerError {
    /// Not JSON of the API's shape.
    #[error("not the API's JSON ({0})")]
    Json(String),
    /// A result type other than a vector.
    #[error("the result is a {0}, not an instant vector")]
    ResultType(String),
    /// A sample's value is not a number.
    #[error("a sample's value '{0}' is not a number")]
    Value(String),
}

#[derive(Deserialize)]
struct Envelope {
    status: String,
    #[serde(default)]
    data: Option<Data>,
    #[serde(default, rename = "errorType")]
    error_type: Option<String>,
    #[serde(default)]
    error: Option<String>,
}

#[derive(Deserialize)]
struct Data {
    #[serde(rename = "resultType")]
    result_type: String,
    result: serde_json::Value,
}

#[derive(Deserialize)]
struct RawSample {
    #[serde(default)]
    metric: BTreeMap<String, String>,
    value: (f64, String),
}

/// What an answer body says: the samples, or Prometheus' own refusal
/// (`errorType`, `error`).
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// `"status": "success"`: the instant vector.
    Samples(Vec<Sample>),
    /// `"status": "error"`.
    Refused {
        /// `errorType`.
        error_type: String,
        /// `error`.
        error: String,
    },
}

/// The API's JSON (`/api/v1/query`) to samples. Pure: the recorded
/// answers of the tests go through it as the live ones do.
pub fn parse_answer(body: &[u8]) -> Result<Answer, AnswerError> {
    let env: Envelope =
        serde_json::from_slice(body).map_err(|e| AnswerError::Json(e.to_string()))?;
    if env.status != "success" {
        return Ok(Answer::Refused {
            error_type: env.error_type.unwrap_or_else(|| env.status.clone()),
            error: env.error.unwrap_or_default(),
        });
    }
    let data = env
        .data
        .ok_or_else(|| AnswerError::Json("no `data` in a success".into()))?;
    if data.result_type != "vector" {
        return Err(AnswerError::ResultType(data.result_type));
    }
    let raw: Vec<RawSample> =
        serde_json::from_value(data.result).map_err(|e| AnswerError::Json(e.to_string()))?;
    raw.into_iter()
        .map(|r| {
            let value = r
                .value
                .1
                .parse::<f64>()
                .map_err(|_| AnswerError::Value(r.value.1.clone()))?;
            Ok(Sample {
                labels: r.metric,
                time: r.value.0,
                value,
            })
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Answer::Samples)
}

/// Percent-encode a query parameter (RFC 3986's unreserved set kept).
pub fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len() * 3);
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char);
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

fn read_token(path: &Path) -> Result<HeaderValue, SourceError> {
    let text = std::fs::read_to_string(path).map_err(|error| SourceError::TokenRead {
        path: path.to_path_buf(),
        error,
    })?;
    let token = text.trim();
    if token.is_empty() {
        return Err(SourceError::Token {
            path: path.to_path_buf(),
            why: "it is empty",
        });
    }
    let mut v =
        HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| SourceError::Token {
            path: path.to_path_buf(),
            why: "it holds characters a header cannot carry (more than one line?)",
        })?;
    v.set_sensitive(true);
    Ok(v)
}

impl Source {
    /// Check the URL, read the token and the CA file.
    pub fn new(o: &SourceOptions) -> Result<Source, SourceError> {
        let base: Url = o.url.trim().parse()?;
        if base.path().contains('?') {
            return Err(SourceError::Query { url: o.url.clone() });
        }
        let tls = match (base.scheme(), &o.ca_file, o.insecure) {
            (Scheme::Http, None, false) => None,
            (Scheme::Http, _, _) => {
                return Err(SourceError::TrustOnHttp {
                    url: base.to_string(),
                });
            }
            (Scheme::Https, _, true) => Some(TlsConfig::insecure()?),
            (Scheme::Https, Some(ca), false) => Some(TlsConfig::from_ca_file(ca)?),
            (Scheme::Https, None, false) => {
                return Err(SourceError::NoTrust {
                    url: base.to_string(),
                });
            }
        };
        let token = o.token_file.as_deref().map(read_token).transpose()?;
        Ok(Source {
            base,
            token,
            tls,
            timeout: o.timeout,
        })
    }

    /// The base URL as it is shown in messages (no trailing `/`).
    pub fn url(&self) -> String {
        self.base.to_string().trim_end_matches('/').to_string()
    }

    /// The request target of `query`: the base path, `/api/v1/query`,
    /// the encoded query and, if given, the evaluation time.
    fn target(&self, query: &str, at: Option<f64>) -> String {
        let time = at.map_or_else(String::new, |t| format!("&time={t:.3}"));
        format!(
            "{}/api/v1/query?query={}{time}",
            self.base.path().trim_end_matches('/'),
            encode(query)
        )
    }

    /// One instant query, evaluated now: its samples, or why there are
    /// none.
    pub async fn instant(&self, query: &str) -> Result<Vec<Sample>, QueryError> {
        self.instant_at(query, None).await
    }

    /// One instant query evaluated at `at` (seconds since the epoch;
    /// Prometheus' now when `None`), so that several queries describe one
    /// moment.
    pub async fn instant_at(
        &self,
        query: &str,
        at: Option<f64>,
    ) -> Result<Vec<Sample>, QueryError> {
        let url = self.url();
        let target = self.target(query, at);
        let (status, body) = tokio::time::timeout(self.timeout, self.exchange(&target))
            .await
            .unwrap_or_else(|_| {
                Err(QueryError::Timeout {
                    url: url.clone(),
                    after: self.timeout,
                })
            })?;
        // Prometheus answers a refused query with 400/422/503 and an error
        // document: that document says more than the status.
        match parse_answer(&body) {
            Ok(Answer::Samples(s)) if status == StatusCode::OK => Ok(s),
            Ok(Answer::Refused { error_type, error }) => Err(QueryError::Refused {
                url,
                query: query.to_string(),
                error_type,
                error,
            }),
            Err(why) if status == StatusCode::OK => Err(QueryError::Answer { url, why }),
            _ => {
                let text = String::from_utf8_lossy(&body);
                let line = text.lines().next().unwrap_or("").trim();
                let detail: String = if line.is_empty() {
                    "(no explanation)".into()
                } else {
                    line.chars().take(200).collect()
                };
                Err(QueryError::Status {
                    url,
                    status,
                    detail,
                })
            }
        }
    }

    async fn exchange(&self, target: &str) -> Result<(StatusCode, Bytes), QueryError> {
        let url = self.url();
        let tcp = TcpStream::connect((self.base.host(), self.base.port()))
            .await
            .map_err(|error| QueryError::Connect {
                url: url.clone(),
                error,
            })?;
        let _ = tcp.set_nodelay(true);
        match &self.tls {
            None => self.talk(tcp, target).await,
            Some(tls) => {
                let name = ServerName::try_from(self.base.host().to_string()).map_err(|e| {
                    QueryError::Tls {
                        url: url.clone(),
                        trust: tls.trust().to_string(),
                        detail: format!("server name: {e}"),
                    }
                })?;
                let stream = TlsConnector::from(tls.client_config())
                    .connect(name, tcp)
                    .await
                    .map_err(|e| QueryError::Tls {
                        url: url.clone(),
                        trust: tls.trust().to_string(),
                        detail: e.to_string(),
                    })?;
                self.talk(stream, target).await
            }
        }
    }

    async fn talk<S>(&self, io: S, target: &str) -> Result<(StatusCode, Bytes), QueryError>
    where
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let url = self.url();
        let http = |e: &dyn std::fmt::Display| QueryError::Http {
            url: url.clone(),
            detail: e.to_string(),
        };
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(io))
            .await
            .map_err(|e| http(&e))?;
        let mut request = Request::get(target)
            .header(HOST, self.base.host_header())
            .header(ACCEPT, "application/json")
            .header(CONNECTION, "close")
            .header(USER_AGENT, concat!("ribbridge/", env!("CARGO_PKG_VERSION")));
        if let Some(t) = &self.token {
            request = request.header(AUTHORIZATION, t.clone());
        }
        let request = request.body(Empty::<Bytes>::new()).map_err(|e| http(&e))?;
        let talk = async {
            let answer = sender.send_request(request).await.map_err(|e| http(&e))?;
            let (parts, body) = answer.into_parts();
            let body = Limited::new(body, MAX_BODY)
                .collect()
                .await
                .map_err(|e| {
                    if e.is::<LengthLimitError>() {
                        http(&format!("the answer exceeds {MAX_BODY} bytes"))
                    } else {
                        http(&e)
                    }
                })?
                .to_bytes();
            Ok((parts.status, body))
        };
        let (answer, _) = tokio::join!(talk, conn);
        answer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vector_answer_with_nan_parses() {
        let body = br#"{"status":"success","data":{"resultType":"vector","result":[
            {"metric":{"__name__":"up","instance":"a:1","node":"n1"},"value":[1700000000.5,"1"]},
            {"metric":{"router":"r"},"value":[1700000000.5,"NaN"]}]}}"#;
        let Answer::Samples(s) = parse_answer(body).expect("parses") else {
            panic!("not samples")
        };
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].label("node"), "n1");
        assert_eq!(s[0].label("absent"), "");
        assert_eq!((s[0].time, s[0].value), (1_700_000_000.5, 1.0));
        assert!(s[1].value.is_nan());
    }

    #[test]
    fn an_error_answer_is_a_refusal_and_garbage_is_an_error() {
        let body = br#"{"status":"error","errorType":"bad_data","error":"parse error at char 3"}"#;
        assert_eq!(
            parse_answer(body),
            Ok(Answer::Refused {
                error_type: "bad_data".into(),
                error: "parse error at char 3".into()
            })
        );
        assert!(matches!(
            parse_answer(b"<html>login</html>"),
            Err(AnswerError::Json(_))
        ));
        let scalar = br#"{"status":"success","data":{"resultType":"scalar","result":[1,"2"]}}"#;
        assert_eq!(
            parse_answer(scalar),
            Err(AnswerError::ResultType("scalar".into()))
        );
        let bad = br#"{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"x"]}]}}"#;
        assert_eq!(parse_answer(bad), Err(AnswerError::Value("x".into())));
    }

    #[test]
    fn the_target_keeps_the_base_path_and_encodes_the_query() {
        let s = Source::new(&SourceOptions {
            url: "http://127.0.0.1:9090/prom/".into(),
            timeout: Duration::from_secs(1),
            ..SourceOptions::default()
        })
        .expect("source");
        assert_eq!(
            s.target("up{job=\"a b\"}", None),
            "/prom/api/v1/query?query=up%7Bjob%3D%22a%20b%22%7D"
        );
        assert_eq!(
            s.target("up", Some(1_765_137_600.25)),
            "/prom/api/v1/query?query=up&time=1765137600.250"
        );
        assert_eq!(s.url(), "http://127.0.0.1:9090/prom");
    }

    #[test]
    fn source_errors_name_the_flag_and_what_to_do() {
        let o = |url: &str| SourceOptions {
            url: url.into(),
            timeout: Duration::from_secs(1),
            ..SourceOptions::default()
        };
        let e = Source::new(&o("https://thanos:9091")).unwrap_err();
        assert!(e.to_string().contains("--ca-file"), "{e}");
        let e = Source::new(&SourceOptions {
            insecure: true,
            ..o("http://p:9090")
        })
        .unwrap_err();
        assert!(matches!(e, SourceError::TrustOnHttp { .. }), "{e}");
        let e = Source::new(&o("p:9090")).unwrap_err();
        assert!(e.to_string().starts_with("--prometheus"), "{e}");
        let dir = tempfile::tempdir().expect("tempdir");
        let empty = dir.path().join("token");
        std::fs::write(&empty, "\n").expect("write");
        let e = Source::new(&SourceOptions {
            token_file: Some(empty),
            ..o("http://p:9090")
        })
        .unwrap_err();
        assert!(e.to_string().contains("is empty"), "{e}");
        let e = Source::new(&SourceOptions {
            token_file: Some(dir.path().join("missing")),
            ..o("http://p:9090")
        })
        .unwrap_err();
        assert!(e.to_string().contains("missing"), "{e}");
    }

    /// A loopback Prometheus over TLS (a self-signed certificate for
    /// 127.0.0.1) that answers `/api/v1/query` with one sample when the
    /// request carries `Bearer s3cret`, 401 otherwise. Its port and the
    /// certificate's PEM.
    async fn tls_prometheus() -> (u16, String) {
        use std::sync::Arc;

        use hyper::service::service_fn;
        use rustls::pki_types::PrivateKeyDer;

        let rcgen::CertifiedKey { cert, signing_key } =
            rcgen::generate_simple_self_signed(vec!["127.0.0.1".into()]).unwrap();
        let key = PrivateKeyDer::Pkcs8(signing_key.serialize_der().into());
        #[allow(deprecated)]
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![cert.der().clone()], key)
            .unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    continue;
                };
                let service = service_fn(|req: Request<hyper::body::Incoming>| async move {
                    let authorized = req
                        .headers()
                        .get(AUTHORIZATION)
                        .is_some_and(|v| v == "Bearer s3cret");
                    let query_ok = req.uri().path() == "/api/v1/query"
                        && req.uri().query() == Some("query=up");
                    let (status, body) = if authorized && query_ok {
                        (
                            StatusCode::OK,
                            r#"{"status":"success","data":{"resultType":"vector","result":[{"metric":{"node":"n1"},"value":[1,"1"]}]}}"#,
                        )
                    } else {
                        (StatusCode::UNAUTHORIZED, "Unauthorized\n")
                    };
                    let mut r = hyper::Response::new(http_body_util::Full::new(Bytes::from(body)));
                    *r.status_mut() = status;
                    Ok::<_, std::convert::Infallible>(r)
                });
                tokio::spawn(
                    hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(tls), service),
                );
            }
        });
        (port, cert.pem())
    }

    #[tokio::test]
    async fn https_with_the_token_and_the_ca_file_answers() {
        let (port, pem) = tls_prometheus().await;
        let dir = tempfile::tempdir().unwrap();
        let (ca, token) = (dir.path().join("ca.crt"), dir.path().join("token"));
        std::fs::write(&ca, pem).unwrap();
        std::fs::write(&token, "s3cret\n").unwrap();
        let o = SourceOptions {
            url: format!("https://127.0.0.1:{port}/"),
            ca_file: Some(ca),
            token_file: Some(token.clone()),
            timeout: Duration::from_secs(5),
            ..SourceOptions::default()
        };
        let s = Source::new(&o).unwrap();
        assert!(
            !format!("{s:?}").contains("s3cret"),
            "the token stays out of logs"
        );
        let got = s.instant("up").await.unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].label("node"), "n1");
        // Another token: 401, and the message says what to do.
        std::fs::write(&token, "wrong").unwrap();
        let e = Source::new(&o).unwrap().instant("up").await.unwrap_err();
        assert!(matches!(e, QueryError::Status { .. }), "{e}");
        assert!(e.to_string().contains("--token-file"), "{e}");
        // No trust in that CA: a TLS error naming the trust.
        let other = dir.path().join("other.crt");
        std::fs::write(
            &other,
            rcgen::generate_simple_self_signed(vec!["x".into()])
                .unwrap()
                .cert
                .pem(),
        )
        .unwrap();
        let e = Source::new(&SourceOptions {
            ca_file: Some(other),
            ..o.clone()
        })
        .unwrap()
        .instant("up")
        .await
        .unwrap_err();
        assert!(matches!(e, QueryError::Tls { .. }), "{e}");
        assert!(e.to_string().contains("other.crt"), "{e}");
    }

    #[tokio::test]
    async fn an_unreachable_prometheus_is_named() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = l.local_addr().expect("addr").port();
        drop(l);
        let s = Source::new(&SourceOptions {
            url: format!("http://127.0.0.1:{port}"),
            timeout: Duration::from_secs(2),
            ..SourceOptions::default()
        })
        .expect("source");
        let e = s.instant("up").await.unwrap_err();
        assert!(matches!(e, QueryError::Connect { .. }), "{e}");
        assert!(e.to_string().contains(&format!("127.0.0.1:{port}")), "{e}");
    }
}
