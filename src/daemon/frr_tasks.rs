//! The FRR-facing tasks of the daemon: the ZAPI client and the vty poller.
//!
//! Contract: the ZAPI client pushes into a bounded channel; the poller reads
//! bgpd's per-peer view and zebra's table view when the core asks (coalesced:
//! at most one poll running and one queued) and on a slow timer, never in a
//! loop of its own. A failed bgpd query reports no established peer: that is
//! what bgpd being unreachable means for the VIPs.

use std::collections::BTreeMap;
use std::time::Duration;

use super::supervise::Supervisor;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::seam::{Input, PollTrigger, Source};
use crate::config::NodeRole;
use crate::frr::vty::json::Negotiated;
use crate::frr::zapi::client::{self as zapi, ZapiConfig};
use crate::frr::{VtyClient, ZapiEvent};
use crate::model::Family;
use crate::model::PrefixSet;
use crate::model::{Families, PeerView};
use crate::reconcile::Event;
use crate::telemetry;

fn zapi_config(s: &NodeRole) -> ZapiConfig {
    let mut cfg = ZapiConfig::in_dir(&s.frr_dir, s.zapi_table());
    cfg.mode = s.table_mode;
    cfg
}

/// Start the ZAPI client and the poller, both restartable: what they hold
/// is read again from FRR.
pub fn spawn(
    tasks: &mut Supervisor,
    s: &NodeRole,
    frr_tx: mpsc::Sender<ZapiEvent>,
    results: mpsc::Sender<Input>,
    poll: PollTrigger,
    stop: CancellationToken,
) {
    let cfg = zapi_config(s);
    let zstop = stop.clone();
    tasks.restartable("zapi client", move || {
        let (cfg, tx, stop) = (cfg.clone(), frr_tx.clone(), zstop.clone());
        Box::pin(async move {
            // However the client ends (a panic included), the owner hears
            // that zebra's view is gone until the restart's dump.
            let _gone = Gone(tx.clone());
            tokio::select! {
                () = stop.cancelled() => {}
                () = zapi::run(cfg, tx) => {}
            }
            Ok(())
        })
    });
    let s = s.clone();
    tasks.restartable("vty poller", move || {
        let (s, results, poll, stop) = (s.clone(), results.clone(), poll.clone(), stop.clone());
        Box::pin(async move {
            run_poller(&s, &results, &poll, &stop).await;
            Ok(())
        })
    });
}

/// Tells the owner the ZAPI client ended, when dropped (also while a
/// panic unwinds). Best effort: a full channel means the owner is busy
/// with the client's events, and the restart's `Connected` follows.
struct Gone(mpsc::Sender<ZapiEvent>);

impl Drop for Gone {
    fn drop(&mut self) {
        let _ = self.0.try_send(ZapiEvent::Disconnected {
            reason: "the ZAPI client task ended; it restarts".to_string(),
            retry_in_ms: u64::try_from(super::supervise::BACKOFF_MIN.as_millis())
                .unwrap_or(u64::MAX),
        });
    }
}

/// The vty poller: a full poll when asked, every `bgp_poll_secs`, and
/// after bgpd's configuration changed (read every [`CONFIG_POLL`]).
async fn run_poller(
    s: &NodeRole,
    results: &mpsc::Sender<Input>,
    poll: &PollTrigger,
    stop: &CancellationToken,
) {
    let mut poller = Poller::new(s);
    let period = Duration::from_secs(s.bgp_poll_secs);
    let mut slow = tokio::time::interval(period);
    slow.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut config_tick = tokio::time::interval(CONFIG_POLL);
    config_tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            () = poll.asked() => {}
            _ = slow.tick() => {}
            _ = config_tick.tick() => {
                // Only bgpd's configuration; when it changed (a drain,
                // a reload), its events, then a full poll.
                let changed = poller.read_config().await;
                if changed.is_empty() {
                    continue;
                }
                for ev in changed {
                    if results.send(Input::Core(ev, Source::Vty)).await.is_err() {
                        return;
                    }
                }
            }
        }
        for ev in poller.poll().await {
            if results.send(Input::Core(ev, Source::Vty)).await.is_err() {
                return;
            }
        }
    }
}

/// How often the poller reads bgpd's configuration alone (the drain and
/// the intent): a change is seen within a second.
const CONFIG_POLL: Duration = Duration::from_secs(1);

/// How long `status --oneshot` waits for zebra's first complete view.
const SNAPSHOT_LIMIT: Duration = Duration::from_secs(10);

/// Long-lived vty clients (each reconnects on its own).
#[derive(Debug)]
struct Poller {
    bgpd: VtyClient,
    zebra: VtyClient,
    tables: Vec<u32>,
    /// The drain as last reported to the core (None: never read).
    drained: Option<bool>,
    /// The intent as last reported to the core (None: never read).
    intent: Option<crate::model::intent::Intent>,
    /// bgpd's and zebra's configuration texts the intent was read from.
    texts: Option<(String, Option<String>)>,
    /// The next read serves a poll: whole if the last is a second old.
    fresh: bool,
    /// The last whole read reported a change: the next is a second later
    /// whatever its cost, to confirm it (a read held as the middle of
    /// ribbridge's own heal, `reconcile::reimport`, is replaced by then).
    confirm: bool,
    /// When the configuration was last read whole, and how long it took.
    last_full: Option<(tokio::time::Instant, Duration)>,
    /// The probe's baseline, read just before the last full read (None:
    /// that probe failed; the next one is taken as the baseline).
    probe: Option<ProbeRead>,
    /// The established peers of the last bgpd view (whose outbound policy
    /// the probe reads).
    established: Vec<String>,
    /// What each established session negotiated, read once per session
    /// (keyed by the peer, with its `connectionsEstablished` count).
    negotiated: BTreeMap<String, (Option<u64>, Negotiated)>,
    /// zebra's realm support, once read (see [`Poller::realms`]).
    realms: Option<Option<bool>>,
}

/// One probe: what it read and, for each, the text without counters.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ProbeRead {
    targets: Vec<Probe>,
    texts: Vec<String>,
}

/// One object the probe reads.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Probe {
    Map(String),
    List(Family, String),
}

/// What the probe reads: the route-maps of the redistributions of
/// `tables`, the outbound route-maps and prefix-lists of the `established`
/// peers (their own or their peer-group's), the route-maps those `call`,
/// and every prefix-list those match: most of what decides whether a VIP
/// is sent. Sorted, once each. Access-lists, community-lists and AS-path
/// lists are not probed: a change to one is seen at the next full read.
fn probe_targets(
    intent: &crate::model::intent::Intent,
    tables: &[u32],
    established: &[String],
) -> Vec<Probe> {
    use crate::model::intent::Match;
    let mut maps = std::collections::BTreeSet::new();
    for r in intent
        .redistributions
        .iter()
        .filter(|r| tables.contains(&r.table))
    {
        if let Some(m) = &r.route_map {
            maps.insert(m.clone());
        }
    }
    let mut out: std::collections::BTreeSet<Probe> = std::collections::BTreeSet::new();
    for peer in established {
        let Some(p) = intent.peers.get(peer) else {
            continue;
        };
        let group = p.group.as_ref().and_then(|g| intent.peers.get(g));
        for (family, f) in p
            .out
            .iter()
            .chain(group.into_iter().flat_map(|g| g.out.iter()))
        {
            if let Some(m) = &f.route_map {
                maps.insert(m.clone());
            }
            if let Some(l) = &f.prefix_list {
                out.insert(Probe::List(*family, l.clone()));
            }
        }
    }
    // The maps those `call`, however deep (each once).
    let mut todo: Vec<String> = maps.iter().cloned().collect();
    while let Some(m) = todo.pop() {
        for e in intent.route_maps.get(&m).into_iter().flatten() {
            if let Some(c) = &e.call
                && maps.insert(c.clone())
            {
                todo.push(c.clone());
            }
        }
    }
    for m in &maps {
        for e in intent.route_maps.get(m).into_iter().flatten() {
            for c in &e.matches {
                if let Match::PrefixList { family, name } = c {
                    out.insert(Probe::List(*family, name.clone()));
                }
            }
        }
        out.insert(Probe::Map(m.clone()));
    }
    out.into_iter().collect()
}

/// The full read may cost at most 1/READ_BUDGET of the time (0.02 %): its
/// period is its own duration this many times over (bgpd spends about
/// that long producing it: docs/PERFORMANCE.md, "Reading bgpd's
/// configuration").
const READ_BUDGET: u32 = 5_000;

/// The longest period between two full reads, whatever they cost.
const MAX_FULL_READ_PERIOD: Duration = Duration::from_secs(30);

/// A route-map's or prefix-list's JSON with its counters (`invoked`,
/// `hitCount`, ...: every key naming a count or an invocation) taken out:
/// what is left changes only with the configuration. Text that is not
/// JSON is kept as it is.
fn without_counters(text: &str) -> String {
    fn strip(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(m) => {
                m.retain(|k, _| {
                    let k = k.to_ascii_lowercase();
                    !k.contains("invoked") && !k.contains("count")
                });
                m.values_mut().for_each(strip);
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(mut v) => {
            strip(&mut v);
            v.to_string()
        }
        Err(_) => text.to_string(),
    }
}

impl Poller {
    fn new(s: &NodeRole) -> Poller {
        let timeout = Duration::from_secs(5);
        Poller {
            bgpd: VtyClient::lazy(s.frr_dir.join("bgpd.vty"), timeout),
            zebra: VtyClient::lazy(s.frr_dir.join("zebra.vty"), timeout),
            tables: vec![s.table],
            drained: None,
            intent: None,
            texts: None,
            fresh: false,
            confirm: false,
            last_full: None,
            probe: None,
            established: Vec::new(),
            negotiated: BTreeMap::new(),
            realms: None,
        }
    }

    /// One round: zebra's table view for each watched table, then bgpd's
    /// per-peer view (last, so the view the core waits for is the newest).
    async fn poll(&mut self) -> Vec<Event> {
        let mut out = Vec::new();
        for &table in &self.tables {
            let mut prefixes = PrefixSet::default();
            let mut ok = true;
            for afi in [Family::Ipv4, Family::Ipv6] {
                match self.zebra.route_prefixes(afi, table).await {
                    Ok(view) => prefixes = prefixes.union(view),
                    Err(e) => {
                        ok = false;
                        telemetry::frr_query_error("zebra");
                        tracing::debug!(error = %e, table, "zebra: table view unavailable");
                    }
                }
            }
            if ok {
                out.push(Event::ZebraTable { table, prefixes });
            }
        }
        // The drain and the intent live in bgpd's configuration: read back
        // every poll (a restarted ribbridge finds them there), reported
        // when they change; first, so the bgpd view below is newer.
        // A poll confirms what the core is about to report: the
        // configuration it rests on is at most a second old (a removed
        // `redistribute` line, which no probe sees, is then `unconfigured`,
        // not a `not_redistributed` drift).
        self.fresh = true;
        out.extend(self.read_config().await);
        out.push(Event::BgpView {
            peers: self.bgp_view().await,
        });
        out
    }

    /// bgpd's configuration (and zebra's, where a redistribution goes
    /// through its import): the drain and the intent, as events for what
    /// changed since they were last reported. Unreadable: nothing changes.
    async fn read_config(&mut self) -> Vec<Event> {
        if !self.full_read_due().await {
            return Vec::new();
        }
        // The probe's baseline is read just before the configuration: a
        // change made between the two is in the text read, and one made
        // after it differs from the baseline. Read after the text, it would
        // hide what changed in between (a reload's later commands, such as
        // the removal of a drain, seen only at the next full read: 5 s).
        self.probe = self.probe_now().await;
        let started = tokio::time::Instant::now();
        let read = self.bgpd.running_config().await;
        self.last_full = Some((started, started.elapsed()));
        let config = match read {
            Ok(c) => c,
            Err(e) => {
                telemetry::frr_query_error("bgpd");
                tracing::debug!(error = %e, "bgpd: running config unavailable; drain and intent unchanged");
                return Vec::new();
            }
        };
        // The same text as last time (the common case, every second): not
        // parsed again. zebra's configuration matters only where a
        // redistribution goes through its import (8.4's `ip import-table`).
        let same = self.texts.as_ref().is_some_and(|(b, _)| *b == config);
        let parsed = (!same).then(|| crate::model::intent::parse(&config, None));
        let drained = match &parsed {
            Some(i) => self
                .tables
                .iter()
                .any(|&t| crate::drain::plan::intent_is_drained(i, t)),
            None => self.drained.unwrap_or(false),
        };
        let needs_zebra = match (&parsed, &self.intent) {
            (Some(i), _) | (None, Some(i)) => crate::model::intent::needs_zebra(i),
            (None, None) => false,
        };
        let zebra = if needs_zebra {
            match self.zebra.running_config().await {
                Ok(z) => Some(z),
                Err(e) => {
                    telemetry::frr_query_error("zebra");
                    tracing::debug!(error = %e, "zebra: running config unavailable; intent unchanged");
                    return Vec::new();
                }
            }
        } else {
            None
        };
        self.confirm = !(same && self.texts.as_ref().is_some_and(|(_, z)| *z == zebra));
        if !self.confirm {
            return Vec::new();
        }
        let mut intent = parsed.unwrap_or_else(|| crate::model::intent::parse(&config, None));
        if let Some(z) = &zebra {
            intent.imports = Some(crate::model::intent::imports(z));
        }
        intent.realms = self.realms().await;
        let mut out = Vec::new();
        if self.drained != Some(drained) {
            self.drained = Some(drained);
            out.push(Event::Drain { drained });
        }
        self.texts = Some((config, zebra));
        if self.intent.as_ref() != Some(&intent) {
            self.intent = Some(intent.clone());
            out.push(Event::Intent { intent });
        }
        out
    }

    /// Whether zebra was built with realm support (read once: a build
    /// does not change under a running zebra's socket; a restart of FRR
    /// that replaced it is read again after a failed read).
    async fn realms(&mut self) -> Option<bool> {
        if let Some(r) = self.realms {
            return r;
        }
        match self.zebra.realms().await {
            Ok(r) => {
                self.realms = Some(r);
                r
            }
            Err(e) => {
                tracing::debug!(error = %e, "zebra: show version unavailable; realm support unknown");
                None
            }
        }
    }

    /// Whether to read the whole configuration now: when it was never read,
    /// when the budget allows (its last read's time, [`READ_BUDGET`] times
    /// over, has passed: a small configuration is read every second, one of
    /// 64 neighbours about every 25 s), for a poll or to confirm a change
    /// when the last read is a second old, or when the probe saw a change.
    async fn full_read_due(&mut self) -> bool {
        let Some((at, took)) = self.last_full else {
            return true;
        };
        let period = if std::mem::take(&mut self.fresh) || self.confirm {
            CONFIG_POLL
        } else {
            took.saturating_mul(READ_BUDGET)
                .clamp(CONFIG_POLL, MAX_FULL_READ_PERIOD)
        };
        if at.elapsed() + CONFIG_POLL / 10 >= period {
            return true;
        }
        self.probe_changed().await
    }

    /// The redistributions' route-maps as bgpd reports them (`show
    /// route-map NAME json`, a few hundred bytes each), their counters left
    /// out: true when they differ from the baseline (a drain's entry gone,
    /// an entry added ahead of the VIPs' permit), or when what is probed
    /// changed (a new intent, a peer established). Without a baseline, this
    /// probe is taken as one. A failed probe is no change.
    async fn probe_changed(&mut self) -> bool {
        if self.intent.is_none() {
            return true;
        }
        let Some(now) = self.probe_now().await else {
            // Unreadable: the budgeted full read alone keeps the intent
            // current (a failure taken for a change would read the whole
            // configuration every second).
            return false;
        };
        match &self.probe {
            Some(before) => *before != now,
            None => {
                self.probe = Some(now);
                false
            }
        }
    }

    /// What the probe reads now, by the last intent and peers: None when
    /// there is no intent yet or a read failed (counted).
    async fn probe_now(&mut self) -> Option<ProbeRead> {
        let targets = probe_targets(self.intent.as_ref()?, &self.tables, &self.established);
        let mut texts = Vec::with_capacity(targets.len());
        for t in &targets {
            let read = match t {
                Probe::Map(name) => self.bgpd.route_map_json(name).await,
                Probe::List(family, name) => self.bgpd.prefix_list_json(*family, name).await,
            };
            match read {
                Ok(text) => texts.push(without_counters(&text)),
                Err(e) => {
                    telemetry::frr_query_error("bgpd");
                    tracing::debug!(error = %e, probe = ?t, "bgpd: probe unavailable");
                    return None;
                }
            }
        }
        Some(ProbeRead { targets, texts })
    }

    async fn bgp_view(&mut self) -> Vec<PeerView> {
        let mut peers: BTreeMap<String, PeerView> = BTreeMap::new();
        for afi in [Family::Ipv4, Family::Ipv6] {
            let summary = match self.bgpd.bgp_summary(afi).await {
                Ok(s) => s,
                Err(e) => {
                    telemetry::frr_query_error("bgpd");
                    tracing::warn!(error = %e, "bgpd: summary unavailable; counting no established peer");
                    continue;
                }
            };
            for (name, p) in summary.peers {
                let established = p.is_established();
                let mut advertised = PrefixSet::default();
                if established {
                    match self.bgpd.advertised_routes(afi, &name).await {
                        Ok(a) => advertised = a.prefixes,
                        Err(e) => {
                            telemetry::frr_query_error("bgpd");
                            tracing::warn!(error = %e, peer = %name, "bgpd: advertised-routes unavailable");
                        }
                    }
                }
                // Listed in this family's summary: activated in it; an
                // established session carries it only if it negotiated it.
                let family = afi;
                let carried = !established
                    || self
                        .negotiated(&name, p.connections_established)
                        .await
                        .is_none_or(|n| match family {
                            Family::Ipv4 => n.ipv4_unicast,
                            Family::Ipv6 => n.ipv6_unicast,
                        });
                let e = peers.entry(name.clone()).or_insert_with(|| PeerView {
                    peer: name.into(),
                    established: false,
                    advertised: PrefixSet::default(),
                    up_ms: None,
                    families: Families::NONE,
                });
                if established {
                    e.up_ms = e.up_ms.max(p.peer_uptime_msec);
                }
                if carried {
                    e.families.insert(family);
                }
                e.established |= established;
                e.advertised = std::mem::take(&mut e.advertised).union(advertised);
            }
        }
        self.established = peers
            .values()
            .filter(|p| p.established)
            .map(|p| p.peer.to_string())
            .collect();
        self.negotiated
            .retain(|peer, _| peers.get(peer).is_some_and(|p| p.established));
        peers.into_values().collect()
    }

    /// What `peer`'s current session negotiated: read once per session
    /// (`connections`, bgpd's count of its sessions, tells a new one).
    /// None when it cannot be told (the read failed, or bgpd printed no
    /// capabilities): the family is then taken as carried, as activated.
    async fn negotiated(&mut self, peer: &str, connections: Option<u64>) -> Option<Negotiated> {
        if let Some((at, n)) = self.negotiated.get(peer)
            && *at == connections
        {
            return n.known.then_some(*n);
        }
        match self.bgpd.negotiated(peer).await {
            Ok(n) => {
                self.negotiated.insert(peer.to_string(), (connections, n));
                n.known.then_some(n)
            }
            Err(e) => {
                telemetry::frr_query_error("bgpd");
                tracing::debug!(error = %e, peer, "bgpd: the session's families unavailable; taken as activated");
                None
            }
        }
    }
}

/// One poll with fresh clients (for `status --oneshot`).
pub async fn poll_once(s: &NodeRole) -> Vec<Event> {
    Poller::new(s).poll().await
}

/// One ZAPI session until its first complete view: the release and the
/// events up to and including `Synced`.
pub async fn zapi_snapshot(s: &NodeRole) -> Result<(String, Vec<ZapiEvent>), super::DaemonError> {
    let events = zapi::until_synced(zapi_config(s), SNAPSHOT_LIMIT)
        .await
        .map_err(|e| super::DaemonError::Zebra {
            dir: s.frr_dir.clone(),
            reason: e.to_string(),
        })?;
    let release = events
        .iter()
        .find_map(|ev| match ev {
            ZapiEvent::Connected { release, .. } => Some(release.to_string()),
            _ => None,
        })
        .unwrap_or_else(|| "unknown".to_string());
    Ok((release, events))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::{Event, Poller, without_counters};
    use crate::frr::vty::fake::{FakeVty, success};

    /// A bgpd.vty whose drain entry is there while `drained` holds: in its
    /// configuration and in its route-map's JSON, as bgpd reports both.
    fn bgpd_with_a_drain(dir: &std::path::Path, drained: Arc<AtomicBool>) -> FakeVty {
        FakeVty::serve(&dir.join("bgpd.vty"), move |cmd| {
            let on = drained.load(Ordering::SeqCst);
            let drain = "route-map KUBE-VIP-ROUTES-V4 deny 1\n description ribbridge-drain\nexit\n";
            let rule = |seq: u32, kind: &str| {
                format!(r#"{{"sequenceNumber":{seq},"type":"{kind}","invoked":0}}"#)
            };
            success(match cmd {
                "show running-config" => format!(
                    "router bgp 64512\n address-family ipv4 unicast\n  redistribute \
                     table-direct 198 route-map KUBE-VIP-ROUTES-V4\n exit-address-family\nexit\n\
                     {}route-map KUBE-VIP-ROUTES-V4 permit 10\nexit\n",
                    if on { drain } else { "" }
                ),
                "show route-map KUBE-VIP-ROUTES-V4 json" => {
                    let mut rules = vec![rule(10, "permit")];
                    if on {
                        rules.insert(0, rule(1, "deny"));
                    }
                    format!(
                        r#"{{"KUBE-VIP-ROUTES-V4":{{"rules":[{}]}}}}"#,
                        rules.join(",")
                    )
                }
                _ => String::new(),
            })
        })
        .expect("bind")
    }

    /// A change made just after a full read of bgpd's configuration (a
    /// reload's later commands, after its first ones caused that read) is
    /// seen by the next probe, not at the next full read seconds later: the
    /// probe's baseline predates the read.
    #[tokio::test]
    async fn a_change_right_after_a_full_read_is_seen_by_the_next_probe() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let drained = Arc::new(AtomicBool::new(true));
        let bgpd = bgpd_with_a_drain(tmp.path(), Arc::clone(&drained));
        let mut poller = Poller::new(&crate::config::NodeRole {
            frr_dir: tmp.path().to_path_buf(),
            table: 198,
            ..Default::default()
        });
        let first = poller.read_config().await;
        assert!(first.contains(&Event::Drain { drained: true }), "{first:?}");
        // A second full read (its period passed) takes the probe's baseline
        // before the text; the change comes right after it.
        poller.last_full = None;
        assert!(poller.read_config().await.is_empty(), "nothing changed");
        drained.store(false, Ordering::SeqCst);
        let next = poller.read_config().await;
        assert!(
            next.contains(&Event::Drain { drained: false }),
            "the drain's removal, seen at the next read: {next:?} after {:?}",
            bgpd.commands()
        );
    }

    /// A change a whole read reported is read whole again a second later,
    /// whatever the read's budget says: a read held as the middle of
    /// ribbridge's own heal (`reconcile::reimport`) is replaced within a
    /// second at any size of configuration.
    #[tokio::test]
    async fn a_reported_change_is_confirmed_by_a_whole_read_a_second_later() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let bgpd = bgpd_with_a_drain(tmp.path(), Arc::new(AtomicBool::new(true)));
        let mut poller = Poller::new(&crate::config::NodeRole {
            frr_dir: tmp.path().to_path_buf(),
            table: 198,
            ..Default::default()
        });
        let whole = || {
            bgpd.commands()
                .iter()
                .filter(|c| *c == "show running-config")
                .count()
        };
        assert!(!poller.read_config().await.is_empty(), "the first read");
        // As if that read was 1.2 s ago and took 10 ms: its budget alone
        // puts the next whole read 30 s after it.
        let ago = tokio::time::Instant::now()
            .checked_sub(std::time::Duration::from_millis(1_200))
            .expect("a monotonic clock 1.2 s old");
        let budget = std::time::Duration::from_millis(10);
        poller.last_full = Some((ago, budget));
        poller.read_config().await;
        assert_eq!(whole(), 2, "the change confirmed by a whole read");
        poller.last_full = Some((ago, budget));
        poller.read_config().await;
        assert_eq!(whole(), 2, "confirmed: the budget again, the probe only");
    }

    #[test]
    fn a_route_map_probe_ignores_bgpd_counters_only() {
        let at = |invoked: u32, seq: u32| {
            format!(
                r#"{{"BGP-VIP-ROUTES-V4":{{"invoked":{invoked},"disabledOptimization":false,"rules":[{{"sequenceNumber":{seq},"type":"permit","invoked":{invoked},"matchClauses":["ip address prefix-list P"],"setClauses":[],"action":"Exits"}}]}}}}"#
            )
        };
        assert_eq!(without_counters(&at(1, 10)), without_counters(&at(977, 10)));
        assert_ne!(without_counters(&at(1, 10)), without_counters(&at(1, 5)));
        assert_eq!(without_counters("% not json"), "% not json");
        let list = |hits: u32| {
            format!(
                r#"{{"ipv4":{{"P":{{"count":1,"rangeNumberReceived":0,"entries":[{{"sequenceNumber":1,"type":"permit","prefix":"192.0.2.10/32","hitCount":{hits}}}]}}}}}}"#
            )
        };
        assert_eq!(without_counters(&list(0)), without_counters(&list(42)));
    }

    #[test]
    fn the_probe_reads_what_decides_whether_a_vip_is_sent() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/frr/frr-10.7.1/bgpd-running-config-frrk8s.txt"
        ))
        .expect("capture");
        let intent = crate::model::intent::parse(&text, None);
        let t = super::probe_targets(&intent, &[198], &["198.18.1.1".to_string()]);
        let names: Vec<String> = t.iter().map(|p| format!("{p:?}")).collect();
        assert_eq!(
            names,
            [
                "Map(\"198.18.1.1-out\")",
                "Map(\"KUBE-VIP-ROUTES-V4\")",
                "Map(\"KUBE-VIP-ROUTES-V6\")",
                "List(Ipv4, \"198.18.1.1-allowed-ipv4\")",
                "List(Ipv4, \"KUBE-VIP-PREFIXES-V4\")",
                "List(Ipv6, \"198.18.1.1-allowed-ipv6\")",
                "List(Ipv6, \"KUBE-VIP-PREFIXES-V6\")",
            ]
        );
    }
}
