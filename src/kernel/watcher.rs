//! The kernel task: an rtnetlink socket subscribed before any dump, and a
//! second one for dumps (see the module doc of `kernel` for why), that keep
//! the `Mirror` exact and emit `KernelEvent`s into a bounded channel.
//!
//! Contract:
//! - `Watcher::new` opens and configures the sockets synchronously in the
//!   calling thread's network namespace (enter a tokio runtime first); it
//!   joins the link, address, route and nexthop groups before any dump.
//! - `run` does the startup dump, then applies events; it re-dumps (and
//!   counts, by reason) on ENOBUFS, `NLM_F_DUMP_INTR`, link down, address
//!   removal, an undecodable message, a full event channel and a periodic
//!   timer. A re-dump replaces the mirror at once and emits only the
//!   differences, then `Resynced` (with the whole route set at startup and
//!   after a full channel).
//! - It never blocks on the channel: a full channel drops events, counts
//!   them, and is answered by a resync once there is room again.
//! - `view()` hands out a read-only, shared snapshot and the counters.
//! - `lookup()` hands out a [`RouteLookup`]: questions about one route,
//!   answered from the mirror between messages (the mirror is the only
//!   copy of the kernel's routes in the daemon; whoever needs one asks).

use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use netlink_sys::{
    AsyncSocket, AsyncSocketExt, Socket, SocketAddr, TokioSocket, protocols::NETLINK_ROUTE,
};
use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, oneshot, watch};

use super::mirror::Mirror;
use super::types::{Address, KernelEvent, Link, NexthopObject, ResyncReason, Route};
use super::wire::{
    AF_INET, AF_INET6, Message, NLM_F_DUMP, NLM_F_DUMP_INTR, NLM_F_REQUEST, RTM_GETADDR,
    RTM_GETLINK, RTM_GETNEXTHOP, RTM_GETROUTE, decode, encode_route_filter, frames,
};
use crate::model::{Prefix, TableId};

/// Multicast groups: link, IPv4/IPv6 addresses, IPv4/IPv6 routes, nexthop
/// objects (`RTNLGRP_*` numbers, joined with `NETLINK_ADD_MEMBERSHIP`).
const GROUPS: [u32; 6] = [1, 5, 7, 9, 11, 32];
/// Large enough for any dump datagram (the kernel sends at most 32 KiB).
const RECV_BUF: usize = 256 * 1024;
/// Re-dumps in a row that may be spoiled (overrun, interrupted) before the
/// watcher accepts the last one and tries again at the next trigger.
const MAX_DUMP_ATTEMPTS: u32 = 8;
/// How long a pre-dump drain may last before the dump goes ahead anyway
/// (marked spoiled).
const DRAIN_LIMIT: Duration = Duration::from_millis(500);
/// The shortest safety re-dump period: a smaller `resync_period` is raised
/// to it, so that the timer cannot spin.
const RESYNC_PERIOD_MIN: Duration = Duration::from_millis(100);

/// The pause before dumping again after spoiled dump number `attempt`: 2^attempt
/// ms, at most 128 ms, so that a flood can drain.
fn dump_backoff(attempt: u32) -> Duration {
    Duration::from_millis(1 << attempt.min(7))
}

/// Route questions that may wait for the watcher's loop (ARCHITECTURE.md
/// lists it). A heal action asks one; the core keeps at most one heal per
/// VIP in flight, and a full channel makes the asker wait, never the
/// watcher.
pub const ROUTE_QUERY_CHANNEL: usize = 64;

/// A question to the watcher: the mirror's route of `table` to `prefix`.
#[derive(Debug)]
pub struct RouteQuery {
    table: TableId,
    prefix: Prefix,
    reply: oneshot::Sender<Option<Route>>,
}

/// Asks the running watcher for one route of its mirror, as it is when
/// the question is answered.
#[derive(Debug, Clone)]
pub struct RouteLookup {
    tx: mpsc::Sender<RouteQuery>,
}

impl RouteLookup {
    /// The route of `table` to `prefix` with the lowest metric, if the
    /// kernel holds one. Fails only when the watcher has stopped.
    pub async fn route(
        &self,
        table: TableId,
        prefix: Prefix,
    ) -> Result<Option<Route>, KernelError> {
        let (reply, answer) = oneshot::channel();
        self.tx
            .send(RouteQuery {
                table,
                prefix,
                reply,
            })
            .await
            .map_err(|_| KernelError::WatcherGone)?;
        answer.await.map_err(|_| KernelError::WatcherGone)
    }
}

/// The next question, or never when there is no channel or every
/// [`RouteLookup`] is gone.
async fn next_query(rx: &mut Option<mpsc::Receiver<RouteQuery>>) -> RouteQuery {
    match rx {
        Some(r) => match r.recv().await {
            Some(q) => q,
            None => std::future::pending().await,
        },
        None => std::future::pending().await,
    }
}

/// How the kernel task is set up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WatcherConfig {
    /// The tables to mirror.
    pub tables: Vec<TableId>,
    /// When set, the only destinations mirrored (a router vantage's
    /// configured VIPs): the other routes of the tables are decoded and
    /// dropped, so a full table costs nothing per route.
    pub prefixes: Option<std::collections::BTreeSet<crate::model::Prefix>>,
    /// Socket receive buffer in bytes (SO_RCVBUFFORCE when permitted, else
    /// SO_RCVBUF, which the kernel caps at 2 x net.core.rmem_max).
    pub rcvbuf: usize,
    /// Period of the safety re-dump.
    pub resync_period: Duration,
}

impl Default for WatcherConfig {
    fn default() -> WatcherConfig {
        WatcherConfig {
            tables: vec![crate::model::VIP_TABLE],
            prefixes: None,
            rcvbuf: 4 << 20,
            resync_period: Duration::from_secs(60),
        }
    }
}

/// A kernel-side failure, with where and what to do.
#[derive(Debug, thiserror::Error)]
pub enum KernelError {
    /// Opening or configuring the netlink socket failed.
    #[error(
        "rtnetlink socket: {step} failed: {source} (ribbridge needs a Linux kernel with \
         rtnetlink and, for writes and large buffers, CAP_NET_ADMIN)"
    )]
    Socket {
        /// The step that failed.
        step: &'static str,
        /// The OS error.
        source: io::Error,
    },
    /// The kernel refused a request.
    #[error(
        "the kernel refused {what}: {} (errno {errno}){}",
        io::Error::from_raw_os_error(*errno),
        eperm_hint(*errno)
    )]
    Refused {
        /// The request.
        what: String,
        /// The errno the kernel answered.
        errno: i32,
    },
    /// A write for a table that is not watched (the heal primitives only
    /// touch watched tables).
    #[error(
        "refusing to write to table {table}: it is not a watched table (add it to the \
         watched tables or leave it alone)"
    )]
    NotWatched {
        /// The table asked for.
        table: TableId,
    },
    /// The kernel watcher has stopped: nobody can answer for the mirror.
    #[error(
        "the kernel watcher has stopped, so no route can be read from its mirror (its \
         error is in the log; restart ribbridge)"
    )]
    WatcherGone,
}

/// What to do about EPERM, the kernel's answer to a write without
/// CAP_NET_ADMIN.
fn eperm_hint(errno: i32) -> &'static str {
    if errno == nix::errno::Errno::EPERM as i32 {
        "; route and address writes need CAP_NET_ADMIN, which this process lacks \
         (the start-up log says what it holds)"
    } else {
        ""
    }
}

pub(super) fn sock_err(step: &'static str) -> impl FnOnce(io::Error) -> KernelError {
    move |source| KernelError::Socket { step, source }
}

/// Failpoint `kernel-watcher-fail`: the watcher fails (as a socket error
/// would end it) when a route of the armed prefix arrives.
fn failpoint_watcher(events: &[KernelEvent]) -> Result<(), KernelError> {
    for e in events {
        if let KernelEvent::RouteAdded { route } = e
            && crate::fault::armed("kernel-watcher-fail", &route.prefix)
        {
            return Err(KernelError::Socket {
                step: "recv (failpoint kernel-watcher-fail)",
                source: io::Error::other(format!("failpoint armed for {}", route.prefix)),
            });
        }
    }
    Ok(())
}

/// Counters of the kernel task, readable at any time (telemetry).
#[derive(Debug, Default)]
pub struct KernelCounters {
    resyncs: [AtomicU64; ResyncReason::ALL.len()],
    reassertions: AtomicU64,
    overruns: AtomicU64,
    undecodable: AtomicU64,
    dropped_events: AtomicU64,
}

/// A copy of the counters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CountersSnapshot {
    /// Resyncs by reason label.
    pub resyncs: BTreeMap<String, u64>,
    /// Realm-only replaces (re-assertions).
    pub reassertions: u64,
    /// Receive-buffer overruns (ENOBUFS).
    pub overruns: u64,
    /// Messages that could not be decoded.
    pub undecodable: u64,
    /// Events dropped because the channel was full.
    pub dropped_events: u64,
}

impl KernelCounters {
    fn resync(&self, r: ResyncReason) {
        if let Some(c) = ResyncReason::ALL
            .iter()
            .position(|x| *x == r)
            .and_then(|i| self.resyncs.get(i))
        {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Resyncs done for `reason`.
    pub fn resyncs(&self, reason: ResyncReason) -> u64 {
        ResyncReason::ALL
            .iter()
            .position(|x| *x == reason)
            .and_then(|i| self.resyncs.get(i))
            .map_or(0, |c| c.load(Ordering::Relaxed))
    }

    /// All counters at once.
    pub fn snapshot(&self) -> CountersSnapshot {
        CountersSnapshot {
            resyncs: ResyncReason::ALL
                .iter()
                .map(|r| (r.label().to_string(), self.resyncs(*r)))
                .collect(),
            reassertions: self.reassertions.load(Ordering::Relaxed),
            overruns: self.overruns.load(Ordering::Relaxed),
            undecodable: self.undecodable.load(Ordering::Relaxed),
            dropped_events: self.dropped_events.load(Ordering::Relaxed),
        }
    }
}

/// What `/status` and `ribbridge kernel` print: the mirror at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MirrorSnapshot {
    /// Every watched route.
    pub routes: Vec<Route>,
    /// Links by index (to name output interfaces).
    pub links: BTreeMap<u32, Link>,
    /// Nexthop objects by id.
    pub nexthop_objects: BTreeMap<u32, NexthopObject>,
    /// Interface addresses (a VIP that is also an address shadows its route
    /// in FRR 8.4: docs/FRR-BEHAVIOUR.md).
    pub addresses: Vec<Address>,
}

impl MirrorSnapshot {
    /// A copy of `m`.
    pub fn of(m: &Mirror) -> MirrorSnapshot {
        MirrorSnapshot {
            routes: m.routes().collect(),
            links: m.links().clone(),
            nexthop_objects: m.nexthop_objects().clone(),
            addresses: m.addresses().iter().copied().collect(),
        }
    }
}

/// A read-only handle on the running watcher: snapshot, counters, and a
/// way to wait for the next change.
#[derive(Debug, Clone)]
pub struct KernelView {
    snapshot: watch::Receiver<Arc<MirrorSnapshot>>,
    counters: Arc<KernelCounters>,
}

impl KernelView {
    /// The mirror as of the last change.
    pub fn snapshot(&self) -> Arc<MirrorSnapshot> {
        Arc::clone(&self.snapshot.borrow())
    }

    /// The counters.
    pub fn counters(&self) -> &KernelCounters {
        &self.counters
    }

    /// Wait until the mirror changes or events are dropped (after which
    /// the counters tell). Returns at once if that happened since the last
    /// call; `false` when the watcher is gone.
    pub async fn changed(&mut self) -> bool {
        self.snapshot.changed().await.is_ok()
    }
}

/// The kernel task.
pub struct Watcher {
    /// Joined to the groups; never used for requests.
    sock: TokioSocket,
    /// Dumps only (no groups), so a multicast flood cannot stall a dump.
    dumper: TokioSocket,
    seq: u32,
    config: WatcherConfig,
    mirror: Mirror,
    view: KernelView,
    publish: watch::Sender<Arc<MirrorSnapshot>>,
    buf: Vec<u8>,
    /// Set when events were dropped on a full channel.
    owe_resync: bool,
    /// Set when a re-dump was accepted although it may be spoiled (the
    /// kernel kept overrunning us): dump again at the next turn.
    again: Option<ResyncReason>,
    /// Route questions, once `lookup` was called.
    queries: Option<mpsc::Receiver<RouteQuery>>,
}

impl Watcher {
    /// Open the socket in the current network namespace, raise its receive
    /// buffer and join the groups. Needs a tokio runtime entered.
    pub fn new(config: WatcherConfig) -> Result<Watcher, KernelError> {
        let mut tsock =
            TokioSocket::new(NETLINK_ROUTE).map_err(sock_err("socket(NETLINK_ROUTE)"))?;
        let sock = tsock.socket_mut();
        sock.bind_auto().map_err(sock_err("bind"))?;
        set_rcvbuf(sock, config.rcvbuf)?;
        sock.set_netlink_get_strict_chk(true)
            .map_err(sock_err("NETLINK_GET_STRICT_CHK (needs Linux >= 4.20)"))?;
        for g in GROUPS {
            sock.add_membership(g)
                .map_err(sock_err("NETLINK_ADD_MEMBERSHIP"))?;
        }
        let sock = tsock;
        let mut dumper =
            TokioSocket::new(NETLINK_ROUTE).map_err(sock_err("socket(NETLINK_ROUTE) for dumps"))?;
        let d = dumper.socket_mut();
        d.bind_auto().map_err(sock_err("bind (dump socket)"))?;
        d.set_netlink_get_strict_chk(true)
            .map_err(sock_err("NETLINK_GET_STRICT_CHK (needs Linux >= 4.20)"))?;
        let mirror = match &config.prefixes {
            Some(p) => Mirror::with_prefixes(config.tables.iter().copied(), p.clone()),
            None => Mirror::new(config.tables.iter().copied()),
        };
        let (publish, snapshot) = watch::channel(Arc::default());
        Ok(Watcher {
            sock,
            dumper,
            seq: 0,
            config,
            mirror,
            view: KernelView {
                snapshot,
                counters: Arc::default(),
            },
            publish,
            buf: Vec::with_capacity(RECV_BUF),
            owe_resync: false,
            again: None,
            queries: None,
        })
    }

    /// The effective receive buffer (the kernel reports twice what was set).
    pub fn rcvbuf(&self) -> Result<usize, KernelError> {
        self.sock
            .socket_ref()
            .get_rx_buf_sz()
            .map_err(sock_err("SO_RCVBUF"))
    }

    /// A read-only handle on the snapshot and counters. Snapshots are
    /// built only while a view is held; one taken after a change sees the
    /// mirror as of the next change.
    pub fn view(&self) -> KernelView {
        let v = self.view.clone();
        self.publish();
        v
    }

    /// A handle that asks this watcher, once it runs, for routes of its
    /// mirror. Every call replaces the channel of the previous one.
    pub fn lookup(&mut self) -> RouteLookup {
        let (tx, rx) = mpsc::channel(ROUTE_QUERY_CHANNEL);
        self.queries = Some(rx);
        RouteLookup { tx }
    }

    /// The mirror (for the one-shot `ribbridge kernel` command and tests).
    pub fn mirror(&self) -> &Mirror {
        &self.mirror
    }

    /// Re-dump everything now and return the differences (ending with
    /// `Resynced`). `run` calls this; the one-shot command calls it once.
    pub async fn resync(&mut self, reason: ResyncReason) -> Result<Vec<KernelEvent>, KernelError> {
        self.view.counters.resync(reason);
        // Timed for docs/PERFORMANCE.md (the full-resync figure); debug level.
        let started = tokio::time::Instant::now();
        let mut attempt = 0;
        let next = loop {
            attempt += 1;
            let (next, spoiled) = self.dump_all().await?;
            match spoiled {
                Some(why) if attempt < MAX_DUMP_ATTEMPTS => {
                    tracing::debug!(
                        reason = why.label(),
                        attempt,
                        "kernel dump spoiled, dumping again"
                    );
                    // Counted under its own reason; the event keeps the
                    // trigger.
                    self.view.counters.resync(why);
                    // Back off a little so a flood can drain.
                    tokio::time::sleep(dump_backoff(attempt)).await;
                }
                Some(why) => {
                    tracing::warn!(
                        reason = why.label(),
                        "kernel dump spoiled {MAX_DUMP_ATTEMPTS} times in a row; keeping it and dumping again"
                    );
                    self.again = Some(why);
                    break next;
                }
                None => break next,
            }
        };
        let ev = self.mirror.replace(next, reason);
        tracing::debug!(
            reason = reason.label(),
            attempts = attempt,
            routes = self.mirror.len(),
            took_us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
            "kernel resync done"
        );
        self.view
            .counters
            .reassertions
            .store(self.mirror.reassertions(), Ordering::Relaxed);
        self.publish();
        Ok(ev)
    }

    /// Run until `shutdown` completes or the receiver of `tx` is dropped:
    /// startup dump, then events. Returns an error only when the socket
    /// itself fails or the kernel refuses a dump.
    pub async fn run(
        mut self,
        tx: mpsc::Sender<KernelEvent>,
        shutdown: impl std::future::Future<Output = ()>,
    ) -> Result<(), KernelError> {
        tokio::pin!(shutdown);
        // Out of `self`, so that a question can be awaited beside `recv`.
        let mut queries = self.queries.take();
        let ev = self.resync(ResyncReason::Startup).await?;
        self.send_all(&tx, ev);
        let period = self.config.resync_period.max(RESYNC_PERIOD_MIN);
        let mut timer = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
        timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            if tx.is_closed() {
                // The daemon is gone: nobody to tell.
                return Ok(());
            }
            if let Some(r) = self.again.take() {
                let ev = self.resync(r).await?;
                self.send_all(&tx, ev);
                continue;
            }
            let pending = if self.owe_resync {
                Some(ResyncReason::ChannelFull)
            } else {
                None
            };
            tokio::select! {
                biased;
                () = &mut shutdown => return Ok(()),
                () = tx.closed() => return Ok(()),
                permit = tx.reserve(), if pending.is_some() => {
                    drop(permit);
                    self.owe_resync = false;
                    let ev = self.resync(ResyncReason::ChannelFull).await?;
                    self.send_all(&tx, ev);
                }
                q = next_query(&mut queries) => {
                    // The asker may have given up: nothing to tell it then.
                    let _ = q.reply.send(self.mirror.route(q.table, q.prefix));
                }
                _ = timer.tick() => {
                    let ev = self.resync(ResyncReason::Timer).await?;
                    self.send_all(&tx, ev);
                }
                got = self.recv() => {
                    let (events, resync) = match got? {
                        Recv::Overrun => {
                            self.view.counters.overruns.fetch_add(1, Ordering::Relaxed);
                            (Vec::new(), Some(ResyncReason::Overrun))
                        }
                        Recv::Data(n) => self.apply_datagram(n),
                    };
                    failpoint_watcher(&events)?;
                    self.send_all(&tx, events);
                    if let Some(r) = resync {
                        let ev = self.resync(r).await?;
                        self.send_all(&tx, ev);
                    }
                }
            }
        }
    }

    fn send_all(&mut self, tx: &mpsc::Sender<KernelEvent>, events: Vec<KernelEvent>) {
        for e in events {
            if self.owe_resync {
                self.view
                    .counters
                    .dropped_events
                    .fetch_add(1, Ordering::Relaxed);
                continue;
            }
            match tx.try_send(e) {
                Ok(()) => {}
                Err(mpsc::error::TrySendError::Full(_)) => {
                    self.view
                        .counters
                        .dropped_events
                        .fetch_add(1, Ordering::Relaxed);
                    self.owe_resync = true;
                    // Wake `KernelView::changed` so the drop is seen.
                    self.publish.send_modify(|_| ());
                }
                Err(mpsc::error::TrySendError::Closed(_)) => {}
            }
        }
    }

    /// Apply the multicast messages of one datagram.
    fn apply_datagram(&mut self, n: usize) -> (Vec<KernelEvent>, Option<ResyncReason>) {
        let mut events = Vec::new();
        let mut resync = None;
        let msgs = decode_datagram(&self.buf[..n]);
        for m in msgs {
            match m {
                Ok((_, msg)) => {
                    let a = self.mirror.apply(msg);
                    events.extend(a.events);
                    resync = resync.or(a.resync);
                }
                Err(e) => resync = Some(self.undecodable(&e)),
            }
        }
        if !events.is_empty() {
            self.view
                .counters
                .reassertions
                .store(self.mirror.reassertions(), Ordering::Relaxed);
            self.publish();
        }
        (events, resync)
    }

    /// Publish a snapshot for the views handed out. With none (the daemon
    /// takes none) nothing is copied: a snapshot is a second copy of every
    /// route, and building it per change costs a copy of the whole table.
    fn publish(&self) {
        // `self.view` holds one reference to the counters; every `view()`
        // handed out holds another.
        if Arc::strong_count(&self.view.counters) > 1 {
            self.publish
                .send_replace(Arc::new(MirrorSnapshot::of(&self.mirror)));
        }
    }

    /// Count and log a message we could not decode: its effect is unknown,
    /// so the answer is a re-dump.
    fn undecodable(&self, e: &super::wire::WireError) -> ResyncReason {
        tracing::warn!(error = %e, "undecodable rtnetlink message; re-dumping");
        self.view
            .counters
            .undecodable
            .fetch_add(1, Ordering::Relaxed);
        ResyncReason::Undecodable
    }

    async fn recv(&mut self) -> Result<Recv, KernelError> {
        loop {
            self.buf.clear();
            match self.sock.recv(&mut self.buf).await {
                Ok(()) => return Ok(Recv::Data(self.buf.len())),
                Err(e) if e.raw_os_error() == Some(nix::libc::ENOBUFS) => return Ok(Recv::Overrun),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(KernelError::Socket {
                        step: "recv",
                        source: e,
                    });
                }
            }
        }
    }

    async fn send(&mut self, msg: &[u8]) -> Result<(), KernelError> {
        let kernel = SocketAddr::new(0, 0);
        self.dumper
            .send_to(msg, &kernel)
            .await
            .map(|_| ())
            .map_err(sock_err("send dump request"))
    }

    /// Empty the multicast socket's queue, keeping the messages in
    /// `keep` when given. Returns why what was read cannot be trusted, if it
    /// cannot.
    ///
    /// The kernel reports ENOBUFS once per congestion episode: after an
    /// overrun it drops further notifications silently until the queue has
    /// been empty once. Draining before a dump ends the episode, so any loss
    /// after the dump started is reported again (and what is discarded is
    /// older than the dump, which supersedes it). Draining after the dump
    /// collects what changed meanwhile. Gives up after `DRAIN_LIMIT` (a
    /// flood faster than we read).
    async fn drain(
        &mut self,
        mut keep: Option<&mut Vec<Message>>,
    ) -> Result<Option<ResyncReason>, KernelError> {
        let start = tokio::time::Instant::now();
        let mut n = 0u32;
        let mut spoiled = None;
        loop {
            self.buf.clear();
            match self.sock.socket_ref().recv(&mut self.buf, 0) {
                Ok(_) => {
                    if let Some(keep) = keep.as_deref_mut() {
                        for m in decode_datagram(&self.buf) {
                            match m {
                                Ok((_, msg)) => keep.push(msg),
                                Err(e) => spoiled = Some(self.undecodable(&e)),
                            }
                        }
                    }
                }
                Err(e) if e.raw_os_error() == Some(nix::libc::ENOBUFS) => {
                    self.view.counters.overruns.fetch_add(1, Ordering::Relaxed);
                    if keep.is_some() {
                        spoiled = Some(ResyncReason::Overrun);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(spoiled),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(KernelError::Socket {
                        step: "recv (drain)",
                        source: e,
                    });
                }
            }
            n = n.wrapping_add(1);
            if n % 1024 == 0 {
                if start.elapsed() > DRAIN_LIMIT {
                    return Ok(Some(ResyncReason::Overrun));
                }
                // A long drain must not starve the other tasks.
                tokio::task::yield_now().await;
            }
        }
    }

    async fn recv_dump(&mut self) -> Result<usize, KernelError> {
        loop {
            self.buf.clear();
            match self.dumper.recv(&mut self.buf).await {
                Ok(()) => return Ok(self.buf.len()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(KernelError::Socket {
                        step: "recv (dump)",
                        source: e,
                    });
                }
            }
        }
    }

    /// Drain the multicast socket, dump links, addresses, nexthops, then
    /// each watched table in both families into a new mirror on the dump
    /// socket, then apply on top, in order, the notifications that arrived
    /// meanwhile (the newest state wins). Returns why the dump cannot be
    /// trusted, if it cannot.
    async fn dump_all(&mut self) -> Result<(Mirror, Option<ResyncReason>), KernelError> {
        let mut next = self.mirror.empty_like();
        let mut queued = Vec::new();
        let mut spoiled = self.drain(None).await?;
        let mut requests = vec![
            request(RTM_GETLINK, &[0u8; 16]),
            request(RTM_GETADDR, &[0u8; 8]),
            request(RTM_GETNEXTHOP, &[0u8; 8]),
        ];
        for t in &self.config.tables {
            for family in [AF_INET, AF_INET6] {
                requests.push(request(RTM_GETROUTE, &encode_route_filter(family, *t)));
            }
        }
        for mut req in requests {
            self.seq = self.seq.wrapping_add(1);
            let seq = self.seq;
            req[8..12].copy_from_slice(&seq.to_ne_bytes());
            self.send(&req).await?;
            'dump: loop {
                let n = self.recv_dump().await?;
                for m in decode_datagram(&self.buf[..n]) {
                    let (head, msg) = match m {
                        Ok(x) => x,
                        Err(e) => {
                            spoiled = Some(self.undecodable(&e));
                            continue;
                        }
                    };
                    if head.seq != seq {
                        // A late answer to an earlier request: not ours now.
                        continue;
                    }
                    if head.flags & NLM_F_DUMP_INTR != 0 {
                        spoiled = Some(ResyncReason::DumpInterrupted);
                    }
                    match msg {
                        Message::Done => break 'dump,
                        Message::Error(0) => {}
                        // The reply did not fit the receive buffer: the dump
                        // ended early; dump again.
                        Message::Error(code) if -code == nix::libc::ENOBUFS => {
                            self.view.counters.overruns.fetch_add(1, Ordering::Relaxed);
                            spoiled = Some(ResyncReason::Overrun);
                            break 'dump;
                        }
                        // The dump could not run or was cut short: again.
                        Message::Error(code)
                            if -code == nix::libc::EBUSY || -code == nix::libc::EINTR =>
                        {
                            spoiled = Some(ResyncReason::DumpInterrupted);
                            break 'dump;
                        }
                        // A filtered dump of a table that does not exist
                        // (yet) in this family: it is empty.
                        Message::Error(code) if -code == nix::libc::ENOENT => break 'dump,
                        Message::Error(code) => {
                            return Err(KernelError::Refused {
                                what: format!(
                                    "dump request type {}",
                                    u16::from_ne_bytes([req[4], req[5]])
                                ),
                                errno: -code,
                            });
                        }
                        other => {
                            next.apply(other);
                        }
                    }
                }
            }
        }
        if let Some(r) = self.drain(Some(&mut queued)).await? {
            spoiled = Some(r);
        }
        for msg in queued {
            if let Some(r) = next.apply(msg).resync {
                spoiled = spoiled.or(Some(r));
            }
        }
        Ok((next, spoiled))
    }
}

impl fmt::Debug for Watcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Watcher")
            .field("config", &self.config)
            .field("routes", &self.mirror.len())
            .finish()
    }
}

enum Recv {
    Data(usize),
    Overrun,
}

#[derive(Debug, Clone, Copy)]
struct Head {
    seq: u32,
    flags: u16,
}

fn decode_datagram(buf: &[u8]) -> Vec<Result<(Head, Message), super::wire::WireError>> {
    frames(buf)
        .map(|f| {
            let f = f?;
            let head = Head {
                seq: f.seq,
                flags: f.flags,
            };
            decode(&f).map(|m| (head, m))
        })
        .collect()
}

/// A dump request (seq filled in by the caller).
fn request(msg_type: u16, body: &[u8]) -> Vec<u8> {
    super::wire::message(msg_type, NLM_F_REQUEST | NLM_F_DUMP, body)
}

/// SO_RCVBUFFORCE when permitted (CAP_NET_ADMIN), else SO_RCVBUF.
fn set_rcvbuf(sock: &Socket, bytes: usize) -> Result<(), KernelError> {
    use nix::sys::socket::{setsockopt, sockopt};
    if setsockopt(sock, sockopt::RcvBufForce, &bytes).is_ok() {
        return Ok(());
    }
    sock.set_rx_buf_sz(bytes).map_err(sock_err("SO_RCVBUF"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_route_question_is_answered_from_the_queue_or_fails_when_the_watcher_is_gone() {
        let (tx, rx) = mpsc::channel(ROUTE_QUERY_CHANNEL);
        let lookup = RouteLookup { tx };
        let vip: Prefix = "192.0.2.10/32".parse().unwrap();
        let mut mirror = Mirror::new([198]);
        mirror.apply(Message::NewRoute(Route::vip(198, vip, Vec::new())));
        // What the watcher's loop does with each question.
        let mut queries = Some(rx);
        let answering = tokio::spawn(async move {
            for _ in 0..2 {
                let q = next_query(&mut queries).await;
                let _ = q.reply.send(mirror.route(q.table, q.prefix));
            }
        });
        let found = lookup.route(198, vip).await.unwrap();
        assert_eq!(found.map(|r| (r.table, r.prefix)), Some((198, vip)));
        assert_eq!(lookup.route(199, vip).await.unwrap(), None);
        answering.await.unwrap();
        // The loop is gone with its receiver.
        assert!(matches!(
            lookup.route(198, vip).await,
            Err(KernelError::WatcherGone)
        ));
    }
}
