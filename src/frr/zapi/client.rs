//! The ZAPI client task: subscribes to what zebra redistributes from one
//! kernel table and streams it to the daemon as [`ZapiEvent`]s.
//!
//! Session, each time zebra is (re)reached:
//! 1. `show version` on zebra.vty picks the numbering ([`Release::dialect`]);
//!    the table mode comes from the configuration or bgpd's running config.
//! 2. HELLO as proto 0 (ZEBRA_ROUTE_SYSTEM: zebra registers nothing for it,
//!    so our disconnect never flushes a daemon's routes), not synchronous.
//! 3. REDISTRIBUTE_ADD for IPv4 and IPv6: type TABLE_DIRECT (10.x
//!    table-direct) or TABLE (import-table), instance = the table id.
//! 4. ROUTER_ID_ADD, as an end-of-dump marker. ZAPI has none, but zebra
//!    handles one client's messages in order, on one thread, and sends each
//!    REDISTRIBUTE_ADD's dump synchronously inside its handler; its answer to
//!    ROUTER_ID_ADD (a ROUTER_ID_UPDATE, sent at once) is therefore queued
//!    behind every route of both dumps. When it arrives the dump is complete.
//!
//! Stale handling: when the session ends, every route zebra sent is marked
//! stale and [`ZapiEvent::Disconnected`] is emitted (the daemon marks its
//! zebra view stale too). After reconnecting, the dump re-confirms routes
//! with [`ZapiEvent::RouteAdd`]; at the marker every route still stale is
//! dropped with a [`ZapiEvent::RouteDel`] (`stale: true`), then
//! [`ZapiEvent::Synced`] says the view is authoritative again. A route zebra
//! had not yet selected at dump time (it was still reading the kernel after
//! a restart) is dropped here and comes back as a later incremental ADD,
//! which is exactly zebra's view at each moment. zebra's own table view on
//! the vty (`VtyClient::route_table`) is an independent cross-check the
//! daemon can run at any time; it is not needed for correctness here.
//!
//! Reconnects back off exponentially from `backoff_min` to `backoff_max`;
//! the delay resets after a session reaches its marker. A full event
//! channel makes the session wait: zebra's socket buffers meanwhile, and
//! nothing is lost.
//!
//! Errors: [`discover`] fails with a [`DiscoverError`] naming the socket and
//! what to do; every other failure ends the session with its reason in
//! [`ZapiEvent::Disconnected`], and the client retries.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde::{Deserialize, Serialize};
use tokio::net::UnixStream;
use tokio::sync::mpsc;
use tokio_util::codec::Framed;
use tracing::{debug, info, warn};

use super::codec::{
    Command, Dialect, FrameCodec, Hello, ROUTE_SYSTEM, Redistribute, ZapiError, ZapiRoute,
};
use crate::frr::release::{Release, ReleaseNumbering, Unsupported};
use crate::frr::vty::client::VtyClient;
use crate::frr::vty::codec::VtyError;
use crate::frr::vty::json::TableMode;
use crate::model::Family;
use crate::model::Prefix;

/// What the ZAPI client task reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum ZapiEvent {
    /// A session is up and subscribed; the dump follows.
    Connected {
        /// The release zebra reported.
        release: Release,
        /// What was subscribed to.
        mode: TableMode,
        /// The kernel table.
        table: u16,
    },
    /// zebra redistributes this route (an upsert: it replaces any earlier
    /// route for the same VRF and prefix).
    RouteAdd {
        /// The route.
        route: ZapiRoute,
    },
    /// zebra withdrew this route, or (`stale`) it was not confirmed by the
    /// dump after a reconnect.
    RouteDel {
        /// The route as zebra withdrew it; a stale one carries only its
        /// identity (VRF, type, instance, prefix, unicast SAFI): the client
        /// keeps the keys of its view, not the routes.
        route: ZapiRoute,
        /// True when dropped because the new dump did not confirm it.
        stale: bool,
    },
    /// The dump is complete: the routes sent since `Connected` are zebra's
    /// whole view.
    Synced {
        /// Routes in the view.
        routes: usize,
        /// Stale routes dropped.
        dropped_stale: usize,
    },
    /// The session ended; every route is stale until the next `Synced`.
    Disconnected {
        /// Why.
        reason: String,
        /// The wait before the next attempt.
        retry_in_ms: u64,
    },
    /// A frame of a known command could not be decoded (the route is not applied).
    Undecodable {
        /// The command number.
        command: u16,
        /// Why.
        reason: String,
    },
}

/// How the ZAPI client reaches zebra and what it subscribes to.
#[derive(Debug, Clone)]
pub struct ZapiConfig {
    /// zebra's API socket (`zserv.api`).
    pub zserv: PathBuf,
    /// zebra's vty socket, for `show version`.
    pub zebra_vty: PathBuf,
    /// bgpd's vty socket, to read the table mode when `mode` is `None`.
    pub bgpd_vty: PathBuf,
    /// The kernel table (1-65535: ZAPI's instance is 16 bits).
    pub table: u16,
    /// The mode; `None` reads it from bgpd's running configuration.
    pub mode: Option<TableMode>,
    /// The VRF to subscribe in (0 = default).
    pub vrf_id: u32,
    /// First reconnect delay.
    pub backoff_min: Duration,
    /// Largest reconnect delay.
    pub backoff_max: Duration,
    /// How long the end-of-dump marker may take before the session is retried.
    pub sync_timeout: Duration,
}

impl ZapiConfig {
    /// The defaults for an FRR socket directory (`/var/run/frr`, or
    /// `/var/run/frr/<ns>` with `-N`).
    pub fn in_dir(dir: &Path, table: u16) -> ZapiConfig {
        ZapiConfig {
            zserv: dir.join("zserv.api"),
            zebra_vty: dir.join("zebra.vty"),
            bgpd_vty: dir.join("bgpd.vty"),
            table,
            mode: None,
            vrf_id: 0,
            backoff_min: Duration::from_millis(100),
            // A unix-socket connect costs microseconds: retrying every
            // second bounds how long ribbridge lags a restarted zebra (the
            // goal is a consistent view within 2 s of zebra being back;
            // with 5 s the lag reached 1.8 s after 10 s away).
            backoff_max: Duration::from_secs(1),
            sync_timeout: Duration::from_secs(10),
        }
    }
}

/// Why [`discover`] could not tell which release runs or what to subscribe to.
#[derive(Debug, thiserror::Error)]
pub enum DiscoverError {
    /// A vty socket could not be reached, or a command on it failed.
    #[error(
        "cannot {step} {}: {source}; check that the daemon runs and that ribbridge may open its socket",
        socket.display()
    )]
    Vty {
        /// The vty socket.
        socket: PathBuf,
        /// What was being done, as a verb phrase ("run 'show version' on").
        step: &'static str,
        /// The vty client's error.
        #[source]
        source: VtyError,
    },
    /// zebra's `show version` names no release this client has a numbering for.
    #[error("{} ('show version'): {source}", socket.display())]
    Release {
        /// zebra's vty socket.
        socket: PathBuf,
        /// Why the release is unusable.
        #[source]
        source: Unsupported,
    },
    /// bgpd redistributes the table in neither mode.
    #[error(
        "bgpd's running configuration ({}) has neither 'redistribute table-direct {table}' nor 'redistribute table {table}': configure FRR, or set the table mode in ribbridge's configuration",
        socket.display()
    )]
    NoTableMode {
        /// bgpd's vty socket.
        socket: PathBuf,
        /// The kernel table.
        table: u16,
    },
    /// table-direct was asked of a release that lacks it.
    #[error("table-direct needs FRR 10.0 or later, zebra runs {release}: use import-table mode")]
    NoTableDirect {
        /// The release zebra runs.
        release: Release,
    },
}

/// Reads the release (zebra's `show version`) and the mode the session will
/// use (the configuration, else bgpd's running configuration).
pub async fn discover(cfg: &ZapiConfig) -> Result<(Release, Dialect, TableMode), DiscoverError> {
    let vty = |socket: &Path, step| {
        let socket = socket.to_path_buf();
        move |source| DiscoverError::Vty {
            socket,
            step,
            source,
        }
    };
    let zebra = VtyClient::connect(&cfg.zebra_vty)
        .await
        .map_err(vty(&cfg.zebra_vty, "connect to"))?;
    let release = zebra
        .show_version()
        .await
        .map_err(vty(&cfg.zebra_vty, "run 'show version' on"))?;
    let dialect = release.dialect().map_err(|source| DiscoverError::Release {
        socket: cfg.zebra_vty.clone(),
        source,
    })?;
    let mode = match cfg.mode {
        Some(m) => m,
        None => {
            let bgpd = VtyClient::connect(&cfg.bgpd_vty)
                .await
                .map_err(vty(&cfg.bgpd_vty, "connect to"))?;
            bgpd.table_mode(u32::from(cfg.table))
                .await
                .map_err(vty(&cfg.bgpd_vty, "read the running configuration on"))?
                .ok_or_else(|| DiscoverError::NoTableMode {
                    socket: cfg.bgpd_vty.clone(),
                    table: cfg.table,
                })?
        }
    };
    if mode == TableMode::TableDirect && !release.has_table_direct() {
        return Err(DiscoverError::NoTableDirect { release });
    }
    Ok((release, dialect, mode))
}

/// The subscription's route type for a mode.
pub fn route_type(dialect: Dialect, mode: TableMode) -> Option<u8> {
    match mode {
        TableMode::TableDirect => dialect.route_table_direct(),
        TableMode::ImportTable => Some(dialect.route_table()),
    }
}

/// The client's view: each route zebra sent, by (VRF, prefix), and whether
/// it is stale (not yet confirmed since a reconnect). Only keys: a stale
/// withdrawal needs a route's identity, which they and the subscription
/// give ([`identity`]); at 100 000 routes the whole routes were ~33 MB.
type View = BTreeMap<(u32, Prefix), bool>;

/// The route a stale withdrawal names: its identity, nothing zebra sent
/// beyond it.
fn identity(vrf_id: u32, route_type: u8, instance: u16, prefix: Prefix) -> ZapiRoute {
    ZapiRoute {
        vrf_id,
        route_type,
        instance,
        flags: 0,
        message: 0,
        safi: 1,
        prefix,
        src_prefix: None,
        nhg_id: None,
        nexthops: Vec::new(),
        backup_nexthops: Vec::new(),
        distance: None,
        metric: None,
        tag: None,
        mtu: None,
        table_id: None,
    }
}

/// Why a session ended.
enum End {
    /// The receiver is gone: stop the task.
    Closed,
    /// Anything else: reconnect.
    Retry(SessionError),
}

/// Why a session ended and will be retried; its text becomes the reason of
/// [`ZapiEvent::Disconnected`].
#[derive(Debug, thiserror::Error)]
enum SessionError {
    /// The release or the mode could not be read.
    #[error(transparent)]
    Discover(#[from] DiscoverError),
    /// The release has no route type for the mode.
    #[error("FRR {release} has no route type for {mode:?}")]
    NoRouteType {
        /// The release zebra runs.
        release: Release,
        /// The mode asked for.
        mode: TableMode,
    },
    /// zserv.api could not be reached.
    #[error(
        "connect {}: {source}{}",
        path.display(),
        if hint.is_empty() { "; zebra must be running (it makes this socket when it starts)" } else { hint }
    )]
    Connect {
        /// zserv.api.
        path: PathBuf,
        /// [`crate::frr::access::refusal`]'s explanation, or "".
        hint: String,
        /// The socket's error.
        #[source]
        source: io::Error,
    },
    /// The subscription could not be written.
    #[error("send to {}: {source}", path.display())]
    Send {
        /// zserv.api.
        path: PathBuf,
        /// The codec's or the socket's error.
        #[source]
        source: ZapiError,
    },
    /// The end-of-dump marker did not come.
    #[error("zebra sent no end-of-dump marker within {0:?}")]
    NoMarker(Duration),
    /// zebra hung up between frames.
    #[error("zebra closed the connection")]
    Closed,
    /// The stream broke (bad header, cut frame, socket error): it cannot be
    /// resynchronised, only reconnected.
    #[error("{}: {source}", path.display())]
    Stream {
        /// zserv.api.
        path: PathBuf,
        /// What broke.
        #[source]
        source: ZapiError,
    },
}

/// Why [`until_synced`] has no complete view.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SnapshotError {
    /// The session ended before its dump did (the client's reason).
    #[error("{0}")]
    Disconnected(String),
    /// The dump did not complete in time.
    #[error("the dump did not complete within {0:?} (raise the timeout for a large table)")]
    Timeout(Duration),
    /// The client stopped.
    #[error("the ZAPI client stopped")]
    Stopped,
}

/// The one-shot collector's channel from the client ([`until_synced`]):
/// the dump of every VIP of a table fits, and the collector keeps up anyway.
pub const SNAPSHOT_CHANNEL: usize = 4096;

/// One-shot: run the client until zebra's first dump is complete (its
/// `Synced`), at most `limit`; every event up to it, in order. For the
/// commands that read zebra once (`status --oneshot`, `ribbridge frr`).
pub async fn until_synced(
    cfg: ZapiConfig,
    limit: Duration,
) -> Result<Vec<ZapiEvent>, SnapshotError> {
    let (tx, mut rx) = mpsc::channel(SNAPSHOT_CHANNEL);
    let task = tokio::spawn(run(cfg, tx));
    let mut events = Vec::new();
    let collect = async {
        while let Some(ev) = rx.recv().await {
            match ev {
                ZapiEvent::Disconnected { reason, .. } => {
                    return Err(SnapshotError::Disconnected(reason));
                }
                ev => {
                    let done = matches!(ev, ZapiEvent::Synced { .. });
                    events.push(ev);
                    if done {
                        return Ok(());
                    }
                }
            }
        }
        Err(SnapshotError::Stopped)
    };
    let r = tokio::time::timeout(limit, collect).await;
    task.abort();
    match r {
        Ok(Ok(())) => Ok(events),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(SnapshotError::Timeout(limit)),
    }
}

/// Runs the ZAPI client until `tx` is closed. Never returns an error: every
/// failure is reported as [`ZapiEvent::Disconnected`] and retried.
pub async fn run(cfg: ZapiConfig, tx: mpsc::Sender<ZapiEvent>) {
    let mut view = View::new();
    let mut backoff = cfg.backoff_min;
    loop {
        let mut synced = false;
        let reason = match session(&cfg, &tx, &mut view, &mut synced).await {
            End::Closed => return,
            End::Retry(r) => r,
        };
        if synced {
            backoff = cfg.backoff_min;
        }
        for stale in view.values_mut() {
            *stale = true;
        }
        let reason = reason.to_string();
        // The receiver of `Disconnected` decides what is worth a warning
        // (the daemon logs each new cause once); a missing socket would
        // otherwise warn every second forever.
        debug!(%reason, retry_in = ?backoff, "ZAPI session ended");
        let ev = ZapiEvent::Disconnected {
            reason,
            retry_in_ms: u64::try_from(backoff.as_millis()).unwrap_or(u64::MAX),
        };
        if tx.send(ev).await.is_err() {
            return;
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(cfg.backoff_max);
    }
}

/// Hand an event to the daemon. A full channel makes the session wait:
/// zebra's socket buffers meanwhile, and nothing is lost. (Dropping the
/// session instead would make a large table re-dump, overflow again, and
/// never finish.)
async fn emit(tx: &mpsc::Sender<ZapiEvent>, ev: ZapiEvent) -> Result<(), End> {
    tx.send(ev).await.map_err(|_| End::Closed)
}

async fn session(
    cfg: &ZapiConfig,
    tx: &mpsc::Sender<ZapiEvent>,
    view: &mut View,
    synced: &mut bool,
) -> End {
    let (release, dialect, mode) = match discover(cfg).await {
        Ok(x) => x,
        Err(e) => return End::Retry(e.into()),
    };
    let Some(rtype) = route_type(dialect, mode) else {
        return End::Retry(SessionError::NoRouteType { release, mode });
    };
    let stream = match UnixStream::connect(&cfg.zserv).await {
        Ok(s) => s,
        Err(source) => {
            return End::Retry(SessionError::Connect {
                hint: crate::frr::access::refusal(&cfg.zserv, &source),
                path: cfg.zserv.clone(),
                source,
            });
        }
    };
    let mut framed = Framed::new(stream, FrameCodec);
    let hello = dialect.encode_hello(Hello {
        proto: ROUTE_SYSTEM,
        instance: 0,
        session_id: 0,
    });
    let mut out = vec![hello];
    for afi in [Family::Ipv4, Family::Ipv6] {
        out.push(dialect.encode_redistribute(
            true,
            cfg.vrf_id,
            Redistribute {
                afi,
                route_type: rtype,
                instance: cfg.table,
            },
        ));
    }
    out.push(dialect.encode_router_id_add(Family::Ipv4));
    let send = |source| {
        End::Retry(SessionError::Send {
            path: cfg.zserv.clone(),
            source,
        })
    };
    for f in out {
        if let Err(e) = framed.feed(f).await {
            return send(e);
        }
    }
    if let Err(e) = framed.flush().await {
        return send(e);
    }
    info!(%release, ?mode, table = cfg.table, "ZAPI subscribed");
    if let Err(e) = emit(
        tx,
        ZapiEvent::Connected {
            release,
            mode,
            table: cfg.table,
        },
    )
    .await
    {
        return e;
    }
    let add = dialect.command(Command::RedistributeRouteAdd);
    let del = dialect.command(Command::RedistributeRouteDel);
    let marker = dialect.command(Command::RouterIdUpdate);
    let error = dialect.command(Command::Error);
    let deadline = tokio::time::Instant::now() + cfg.sync_timeout;
    loop {
        let next = if *synced {
            framed.next().await
        } else {
            match tokio::time::timeout_at(deadline, framed.next()).await {
                Ok(n) => n,
                Err(_) => return End::Retry(SessionError::NoMarker(cfg.sync_timeout)),
            }
        };
        let frame = match next {
            None => return End::Retry(SessionError::Closed),
            Some(Err(source)) => {
                return End::Retry(SessionError::Stream {
                    path: cfg.zserv.clone(),
                    source,
                });
            }
            Some(Ok(f)) => f,
        };
        let c = frame.command;
        if c == add || c == del {
            let route = match dialect.decode_route(&frame) {
                Ok(r) => r,
                Err(e) => {
                    warn!(command = c, error = %e, "undecodable ZAPI route");
                    if let Err(e) = emit(
                        tx,
                        ZapiEvent::Undecodable {
                            command: c,
                            reason: e.to_string(),
                        },
                    )
                    .await
                    {
                        return e;
                    }
                    continue;
                }
            };
            if route.route_type != rtype || route.instance != cfg.table {
                debug!(?route, "ZAPI route of another subscription, ignored");
                continue;
            }
            let key = (route.vrf_id, route.prefix);
            // Failpoint `zapi-panic`: the client panics when zebra
            // redistributes the armed prefix.
            if crate::fault::armed("zapi-panic", &route.prefix) {
                panic!("failpoint zapi-panic: zebra redistributed {}", route.prefix);
            }
            let ev = if c == add {
                view.insert(key, false);
                ZapiEvent::RouteAdd { route }
            } else {
                view.remove(&key);
                ZapiEvent::RouteDel {
                    route,
                    stale: false,
                }
            };
            if let Err(e) = emit(tx, ev).await {
                return e;
            }
        } else if c == marker && !*synced {
            let stale: Vec<(u32, Prefix)> = view
                .iter()
                .filter(|(_, stale)| **stale)
                .map(|(key, _)| *key)
                .collect();
            for &(vrf_id, prefix) in &stale {
                view.remove(&(vrf_id, prefix));
                let route = identity(vrf_id, rtype, cfg.table, prefix);
                if let Err(e) = emit(tx, ZapiEvent::RouteDel { route, stale: true }).await {
                    return e;
                }
            }
            *synced = true;
            let ev = ZapiEvent::Synced {
                routes: view.len(),
                dropped_stale: stale.len(),
            };
            if let Err(e) = emit(tx, ev).await {
                return e;
            }
        } else if c == error {
            warn!(body = ?frame.body, "zebra answered with ZEBRA_ERROR");
        }
        // Every other command (interface, VRF, capabilities...) is skipped.
    }
}

#[cfg(test)]
mod tests {
    //! A fake zebra, only for what a real one cannot be made to do: send a
    //! malformed frame. (Reconnects and stale routes against the real zebra
    //! are in netns-tests/frr_clients.rs.)
    use super::*;
    use crate::frr::vty::fake::{FakeVty, success};
    use crate::frr::zapi::codec::{Frame, Numbering};
    use bytes::BytesMut;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::UnixListener;

    /// zebra.vty at `path`: answers `show version` as FRR 10.3 and
    /// everything else with success.
    fn fake_zebra_vty(path: &Path) {
        FakeVty::serve(path, |cmd| {
            success(if cmd == "show version" {
                "FRRouting 10.3 (fake) on Linux(6.1).\n"
            } else {
                ""
            })
        })
        .unwrap();
    }

    async fn next(rx: &mut mpsc::Receiver<ZapiEvent>) -> ZapiEvent {
        tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .expect("an event within 10 s")
            .expect("the client is running")
    }

    #[tokio::test]
    async fn discover_errors_name_the_socket_and_keep_the_cause() {
        use std::error::Error as _;
        let dir = tempfile::tempdir().unwrap();
        let cfg = ZapiConfig::in_dir(dir.path(), 198);
        // No zebra at all.
        let e = discover(&cfg).await.unwrap_err();
        assert!(matches!(e, DiscoverError::Vty { .. }), "{e:?}");
        let text = e.to_string();
        assert!(text.contains(&*cfg.zebra_vty.to_string_lossy()), "{text}");
        assert!(text.contains("check that the daemon runs"), "{text}");
        assert!(e.source().is_some(), "the vty error is the source");
        // zebra answers, bgpd (asked for the mode) does not.
        fake_zebra_vty(&cfg.zebra_vty);
        let e = discover(&cfg).await.unwrap_err();
        assert!(
            e.to_string().contains(&*cfg.bgpd_vty.to_string_lossy()),
            "{e}"
        );
    }

    #[tokio::test]
    async fn malformed_frames_and_stale_routes() {
        let dir = tempfile::tempdir().unwrap();
        fake_zebra_vty(&dir.path().join("zebra.vty"));
        let zserv = UnixListener::bind(dir.path().join("zserv.api")).unwrap();
        let d = Dialect::new(Numbering::V10_3);
        let mut cfg = ZapiConfig::in_dir(dir.path(), 198);
        cfg.mode = Some(TableMode::TableDirect);
        cfg.backoff_min = Duration::from_millis(1);
        let (tx, mut rx) = mpsc::channel(16);
        let task = tokio::spawn(run(cfg, tx));
        let route = crate::frr::zapi::codec::sample_route();
        let marker = Frame {
            vrf_id: 0,
            command: d.command(Command::RouterIdUpdate),
            body: bytes::Bytes::from_static(&[2, 32, 1, 1, 1, 1]),
        };
        let encode = |f: Frame| {
            let mut b = BytesMut::new();
            tokio_util::codec::Encoder::encode(&mut FrameCodec, f, &mut b).unwrap();
            b
        };

        // Session 1: the route, the marker, then a frame with Quagga's marker.
        let (mut s, _) = zserv.accept().await.unwrap();
        assert!(matches!(next(&mut rx).await, ZapiEvent::Connected { .. }));
        s.write_all(&encode(d.encode_route(true, &route).unwrap()))
            .await
            .unwrap();
        s.write_all(&encode(marker.clone())).await.unwrap();
        assert_eq!(
            next(&mut rx).await,
            ZapiEvent::RouteAdd {
                route: route.clone()
            }
        );
        assert_eq!(
            next(&mut rx).await,
            ZapiEvent::Synced {
                routes: 1,
                dropped_stale: 0
            }
        );
        s.write_all(&[0, 10, 0xff, 6, 0, 0, 0, 0, 0, 1])
            .await
            .unwrap();
        let ZapiEvent::Disconnected { reason, .. } = next(&mut rx).await else {
            panic!("expected Disconnected");
        };
        assert!(reason.contains("marker is 0xff"), "{reason}");

        // Session 2: the dump no longer has the route: it is dropped as stale.
        let (mut s, _) = zserv.accept().await.unwrap();
        assert!(matches!(next(&mut rx).await, ZapiEvent::Connected { .. }));
        // What the client subscribed to, in order, in this release's numbering.
        let mut got = BytesMut::new();
        // HELLO (18 bytes on 10.x), two REDISTRIBUTE_ADD (14), ROUTER_ID_ADD (12).
        while got.len() < 18 + 2 * 14 + 12 {
            assert_ne!(s.read_buf(&mut got).await.unwrap(), 0, "client closed");
        }
        let mut codec = FrameCodec;
        let hello = tokio_util::codec::Decoder::decode(&mut codec, &mut got)
            .unwrap()
            .unwrap();
        assert_eq!(d.decode_hello(&hello).unwrap().proto, ROUTE_SYSTEM);
        for afi in [Family::Ipv4, Family::Ipv6] {
            let f = tokio_util::codec::Decoder::decode(&mut codec, &mut got)
                .unwrap()
                .unwrap();
            let r = d.decode_redistribute(&f).unwrap();
            assert_eq!((r.afi, r.route_type, r.instance), (afi, 31, 198));
        }
        s.write_all(&encode(marker)).await.unwrap();
        assert_eq!(
            next(&mut rx).await,
            ZapiEvent::RouteDel {
                route: identity(route.vrf_id, route.route_type, route.instance, route.prefix),
                stale: true
            }
        );
        assert_eq!(
            next(&mut rx).await,
            ZapiEvent::Synced {
                routes: 0,
                dropped_stale: 1
            }
        );
        task.abort();
    }
}
