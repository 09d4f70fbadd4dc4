//! What the daemon's loop owns ([`State`]): the configuration, every VIP,
//! the node's addresses, writers and backends, zebra's and bgpd's views,
//! the intent, the drain and the ceiling; and the questions every decision
//! asks of it (ready, tracked, servable, the writer's tick and silence), and
//! a VIP added or touched.
//!
//! Contract: the one mutable record of the core; only [`step`](fn@super::step)
//! changes it (the daemon reads it for `/status`). Serde for the recorded
//! cases; what is rebuilt from the views (writers, backends, deadlines) is
//! not serialised.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::ceiling::Ceiling;
use super::merge::repack;
use super::vip::Vip;
use super::vocab::{Backend, Config, DrainTrack, Millis, Withdrawal};
use super::wakeups::Wakeups;
use super::writer::{KUBE_VIP_TICK_MS, Writer, WriterState};
use crate::model::intent::Intent;
use crate::model::{PeerAddr, PeerView, Prefix, Release, TableId, TableMode};

/// VIPs added one at a time before [`State::vip`] considers repacking
/// the map (a handful of half-full nodes is not worth a rebuild).
const REPACK_FROM: usize = 4_096;

/// The state the daemon's loop owns.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct State {
    /// Tunables.
    pub config: Config,
    /// VIPs by (table, prefix).
    pub vips: BTreeMap<(TableId, Prefix), Vip>,
    /// Local host addresses (for shadowing, and a VIP's own).
    pub addresses: BTreeSet<Prefix>,
    /// Those of `addresses` that cannot be used (IPv6 `tentative` or
    /// `dadfailed`).
    #[serde(default)]
    pub unusable: BTreeSet<Prefix>,
    /// The writers seen re-asserting a watched route, by VIP.
    #[serde(skip)]
    pub writers: BTreeMap<(TableId, Prefix), Writer>,
    /// The probed VIPs' backends, by VIP.
    #[serde(skip)]
    pub backends: BTreeMap<(TableId, Prefix), Backend>,
    /// The ZAPI session, when up.
    pub zebra: Option<(Release, TableMode)>,
    /// The ZAPI session has delivered its first complete view.
    pub zebra_synced: bool,
    /// The kernel mirror has completed a full dump.
    pub kernel_synced: bool,
    /// bgpd's last view and when it was taken.
    pub peers: Vec<PeerView>,
    /// When `peers` was taken (None: never).
    pub bgp_view_at: Option<Millis>,
    /// bgpd's configuration holds the drain (every VIP is `drained`).
    #[serde(default)]
    pub drained: bool,
    /// bgpd's configuration as last read (None: never read; classification
    /// is then what it was before intent was read).
    #[serde(default)]
    pub intent: Option<Intent>,
    /// When the intent last changed (a configuration change): bgpd applies
    /// a changed route-map after its delay timer, which is convergence.
    #[serde(default)]
    pub intent_at: Millis,
    /// The node-wide ceiling on heal actions.
    #[serde(default)]
    pub ceiling: Ceiling,
    /// The VIPs ribbridge takes out of BGP or puts back, by VIP.
    #[serde(skip)]
    pub withdrawals: BTreeMap<(TableId, Prefix), Withdrawal>,
    /// The drain state file and the re-apply of a lost drain.
    #[serde(default)]
    pub drain: DrainTrack,
    /// When zebra last withdrew a route of a watched table (None: not
    /// since the start): a mass deletion's withdrawals take zebra seconds,
    /// and the routes it has not reached yet are its backlog, not stale
    /// (`evaluate`'s `zebra_backlog_due`).
    #[serde(default)]
    pub zebra_withdrawn_at: Option<Millis>,
    /// zebra's progress through the kernel's changes: when it last sent a
    /// route of a watched table, and the latest kernel change it has sent
    /// (the route's last touch before zebra's event). zebra follows the
    /// kernel in order, so a route added after that change and not sent
    /// yet, while zebra still sends, is its backlog, not `kernel_only`
    /// (`evaluate`'s `zebra_behind_due`).
    #[serde(default)]
    pub zebra_sent: Option<(Millis, Millis)>,
    /// Deadlines: (time, VIP) pairs to re-evaluate at that time.
    #[serde(skip)]
    pub(super) wakeups: Wakeups,
    /// VIPs added one at a time since `vips` was last built in full nodes
    /// ([`State::vip`]).
    #[serde(skip)]
    pub(super) vips_unpacked: usize,
    /// Established sessions seen advertising something since they came up
    /// (bgpd's initial-update delay is over for them), by peer, with when
    /// they came up on our clock (negative: before this process started;
    /// None: bgpd did not say).
    #[serde(skip)]
    pub(super) sent: BTreeMap<PeerAddr, Option<i64>>,
    /// When a `reimport_table` heal of each table was last asked or
    /// answered (`reimport`).
    #[serde(skip)]
    pub(super) reimported: BTreeMap<TableId, Millis>,
    /// A read of the configuration held as a re-import's own middle, with
    /// when it was read (`reimport`).
    #[serde(skip)]
    pub(super) held_intent: Option<(Intent, Millis)>,
}

impl State {
    /// A fresh state; configured VIPs start `withdrawn` until observed.
    pub fn new(config: Config, now: Millis) -> State {
        let mut s = State {
            vips: BTreeMap::new(),
            addresses: BTreeSet::new(),
            unusable: BTreeSet::new(),
            writers: BTreeMap::new(),
            withdrawals: BTreeMap::new(),
            backends: BTreeMap::new(),
            zebra: None,
            zebra_synced: false,
            kernel_synced: false,
            peers: Vec::new(),
            bgp_view_at: None,
            drained: false,
            intent: None,
            intent_at: 0,
            ceiling: Ceiling::default(),
            zebra_withdrawn_at: None,
            zebra_sent: None,
            drain: DrainTrack::default(),
            wakeups: Wakeups::default(),
            vips_unpacked: 0,
            sent: BTreeMap::new(),
            reimported: BTreeMap::new(),
            held_intent: None,
            config,
        };
        let table = s.config.table;
        for p in s.config.vips.clone() {
            s.vip(table, p, now);
        }
        s
    }

    /// Ready: the kernel mirror is synced and the ZAPI session has delivered
    /// a complete view. Nothing is classified anew before.
    pub fn ready(&self) -> bool {
        self.kernel_synced && self.zebra.is_some() && self.zebra_synced
    }

    /// Every route of the node's table is a VIP.
    pub(super) fn tracks(&self, table: TableId, _prefix: &Prefix) -> bool {
        self.is_watched(table)
    }

    /// The VIP at (`table`, `prefix`), added (first seen at `now`) if new.
    /// Routes added one at a time come in key order in a burst (one `ip
    /// -batch`), and a B-tree filled in key order leaves its nodes half
    /// full: once the VIPs added that way reach a quarter of the map (and
    /// [`REPACK_FROM`]), it is rebuilt in full nodes. 100 000 routes added
    /// after the start: ~16 MB of nodes, ~9 MB packed (heaptrack).
    pub(super) fn vip(&mut self, table: TableId, prefix: Prefix, now: Millis) -> &mut Vip {
        let key = (table, prefix);
        if !self.vips.contains_key(&key) {
            self.vips_unpacked += 1;
            if self.vips_unpacked >= REPACK_FROM.max(self.vips.len() / 4) {
                repack(&mut self.vips);
                self.vips_unpacked = 0;
            }
        }
        self.vips.entry(key).or_insert_with(|| Vip::new(now))
    }

    /// The VIP whose facts are about to change: schedules the poll that
    /// confirms what followed (bgpd answers zebra's change ~100 ms later).
    pub(super) fn touch(&mut self, table: TableId, prefix: Prefix, now: Millis) -> &mut Vip {
        let at = now + self.config.settle_ms();
        self.wakeups.insert(at, (table, prefix));
        let v = self.vip(table, prefix, now);
        v.touched_at = now;
        v
    }

    pub(super) fn is_watched(&self, table: TableId) -> bool {
        self.config.table == table
    }

    /// The VIP's address is on the node and usable.
    pub fn address_usable(&self, prefix: &Prefix) -> bool {
        self.addresses.contains(prefix) && !self.unusable.contains(prefix)
    }

    /// The node can serve the VIP as far as its address and its backend
    /// go: the address is usable (or not required) and the health probe
    /// (if any) is not down. Nothing re-advertises a VIP that fails this.
    pub fn servable(&self, key: &(TableId, Prefix)) -> bool {
        (!self.config.require_address || self.address_usable(&key.1))
            && !self.backends.get(key).is_some_and(Backend::down)
    }

    /// The tick of the VIP's writer: learned, configured, or kube-vip's
    /// default (5 s).
    pub fn writer_tick(&self, key: &(TableId, Prefix)) -> Millis {
        self.writers
            .get(key)
            .and_then(|w| w.cadence(&self.config).or(w.tick_before))
            .or(self.config.writer_interval_ms)
            .unwrap_or(KUBE_VIP_TICK_MS)
    }

    /// The VIP's writer withdrew it more than `flap_pairs` times within
    /// the window before `now`.
    pub fn flapping(&self, key: &(TableId, Prefix), now: Millis) -> bool {
        self.writers
            .get(key)
            .is_some_and(|w| w.flapping(&self.config, now))
    }

    /// The VIP's writer is silent at `now` (an unknown writer is not).
    pub fn writer_silent(&self, key: &(TableId, Prefix), now: Millis) -> bool {
        self.writers
            .get(key)
            .is_some_and(|w| w.state(&self.config, now) == WriterState::Silent)
    }
}
