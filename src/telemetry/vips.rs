//! The per-VIP series, kept here rather than in the exporter (which cannot
//! remove a series): a VIP's state set, ECMP legs, drift and give-up
//! counters and backend verdicts, created together when [`VipSeries`]
//! admits the VIP and removed together when it is forgotten.

use super::*;

/// A VIP's state gauge: 1 for `state`, 0 for every other class and for
/// `unknown`.
pub fn vip_state(prefix: &Prefix, table: TableId, state: Class) {
    set_vip_state(prefix, table, Some(state));
}

/// A VIP the daemon cannot judge yet (a view is incomplete): 1 for
/// `unknown`, 0 for every class. Every configured VIP starts here, so its
/// series exist from the first scrape.
pub fn vip_unknown(prefix: &Prefix, table: TableId) {
    set_vip_state(prefix, table, None);
}

pub(super) fn set_vip_state(prefix: &Prefix, table: TableId, state: Option<Class>) {
    store().vips.entry((table, *prefix)).or_default().state = state;
}

/// One VIP's gauges in the store: its class (`None`: unknown) and its ECMP
/// legs (`None`: unknown).
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct VipGauges {
    pub(super) state: Option<Class>,
    pub(super) ecmp: Option<u32>,
}

/// The per-VIP series: gauges by (table, VIP), the counters by VIP (their
/// labels have no table), the backend verdicts by (VIP, probe).
#[derive(Debug)]
pub(super) struct Store {
    pub(super) vips: BTreeMap<(TableId, Prefix), VipGauges>,
    pub(super) drifts: BTreeMap<Prefix, BTreeMap<&'static str, u64>>,
    pub(super) given_up: BTreeMap<Prefix, u64>,
    pub(super) backends: BTreeMap<(Prefix, &'static str), Option<bool>>,
}

static STORE: Mutex<Store> = Mutex::new(Store {
    vips: BTreeMap::new(),
    drifts: BTreeMap::new(),
    given_up: BTreeMap::new(),
    backends: BTreeMap::new(),
});

pub(super) fn store() -> MutexGuard<'static, Store> {
    // A panic elsewhere while holding it left a consistent map: keep using it.
    STORE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Remove every series of VIP (`table`, `prefix`): its gauges, and its
/// counters when no other table holds the same prefix.
pub(super) fn remove_vip(table: TableId, prefix: &Prefix) {
    let mut st = store();
    st.vips.remove(&(table, *prefix));
    if !st.vips.keys().any(|(_, p)| p == prefix) {
        st.drifts.remove(prefix);
        st.given_up.remove(prefix);
    }
}

pub(super) fn render_vips(out: &mut String) {
    let st = store();
    if !st.vips.is_empty() {
        family(
            out,
            VIP_STATE,
            "gauge",
            "1 for the VIP's current state, 0 for the others",
        );
        for ((table, prefix), g) in &st.vips {
            let states = Class::ALL
                .iter()
                .map(|c| (c.name(), g.state == Some(*c)))
                .chain(std::iter::once((UNKNOWN_STATE, g.state.is_none())));
            for (name, on) in states {
                let _ = writeln!(
                    out,
                    "{VIP_STATE}{{prefix=\"{prefix}\",table=\"{table}\",state=\"{name}\"}} {}",
                    u8::from(on)
                );
            }
        }
        family(
            out,
            ECMP_NEXTHOPS,
            "gauge",
            "ECMP nexthops of the VIP's route in the kernel (nexthop groups resolved); no series while unknown (see ribbridge_ecmp_nexthops_known)",
        );
        for ((table, prefix), g) in &st.vips {
            if let Some(n) = g.ecmp {
                let _ = writeln!(
                    out,
                    "{ECMP_NEXTHOPS}{{prefix=\"{prefix}\",table=\"{table}\"}} {n}"
                );
            }
        }
        family(
            out,
            ECMP_NEXTHOPS_KNOWN,
            "gauge",
            "1 when ribbridge_ecmp_nexthops has a value, 0 before the kernel mirror is synced",
        );
        for ((table, prefix), g) in &st.vips {
            let _ = writeln!(
                out,
                "{ECMP_NEXTHOPS_KNOWN}{{prefix=\"{prefix}\",table=\"{table}\"}} {}",
                u8::from(g.ecmp.is_some())
            );
        }
    }
    if !st.drifts.is_empty() {
        family(
            out,
            DRIFT_TOTAL,
            "counter",
            "Drifts that persisted past the grace, by state",
        );
        for (prefix, by_state) in &st.drifts {
            for (state, n) in by_state {
                let _ = writeln!(
                    out,
                    "{DRIFT_TOTAL}{{prefix=\"{prefix}\",state=\"{state}\"}} {n}"
                );
            }
        }
    }
    if !st.given_up.is_empty() {
        family(
            out,
            HEAL_GIVEN_UP_TOTAL,
            "counter",
            "Drifts whose healing was given up after the bounded attempts",
        );
        for (prefix, n) in &st.given_up {
            let _ = writeln!(out, "{HEAL_GIVEN_UP_TOTAL}{{prefix=\"{prefix}\"}} {n}");
        }
    }
    if !st.backends.is_empty() {
        family(
            out,
            BACKEND_UP,
            "gauge",
            "A VIP's backend probe: 1 up (rise successes), 0 down (fall failures); no series while unknown (see ribbridge_backend_up_known)",
        );
        for ((prefix, probe), up) in &st.backends {
            if let Some(up) = up {
                let _ = writeln!(
                    out,
                    "{BACKEND_UP}{{prefix=\"{prefix}\",probe=\"{probe}\"}} {}",
                    u8::from(*up)
                );
            }
        }
        family(
            out,
            BACKEND_UP_KNOWN,
            "gauge",
            "1 when ribbridge_backend_up has a verdict, 0 while the probe has not reached rise or fall results",
        );
        for ((prefix, probe), up) in &st.backends {
            let _ = writeln!(
                out,
                "{BACKEND_UP_KNOWN}{{prefix=\"{prefix}\",probe=\"{probe}\"}} {}",
                u8::from(up.is_some())
            );
        }
    }
}

/// Which VIPs have per-VIP series: the configured ones, and at most
/// `max_detailed_vips` discovered ones (`config::DEFAULT_MAX_DETAILED_VIPS`)
/// at a time. Admitting a VIP creates all its series at once (state
/// `unknown`, ECMP legs unknown) whatever happens to it next; forgetting
/// a discovered VIP removes them and frees its slot for the next VIP that
/// asks. The VIPs refused are remembered until admitted or forgotten, so
/// `ribbridge_vips_without_series` counts exactly them. A route that is no
/// VIP never reaches this gate.
#[derive(Debug, Clone, Default)]
pub struct VipSeries {
    configured: HashSet<(TableId, Prefix)>,
    discovered: HashSet<(TableId, Prefix)>,
    refused: HashSet<(TableId, Prefix)>,
    /// Admitted since the last [`VipSeries::take_admitted`]: their state
    /// is the owner's to publish.
    fresh: Vec<(TableId, Prefix)>,
    limit: usize,
    warned: bool,
}

impl VipSeries {
    /// A gate that always admits `configured` and at most `limit` others.
    pub fn new(configured: impl IntoIterator<Item = (TableId, Prefix)>, limit: usize) -> VipSeries {
        VipSeries {
            configured: configured.into_iter().collect(),
            limit,
            ..VipSeries::default()
        }
    }

    /// May this VIP have series? Admits it when there is room, creating its
    /// series. The first refusal is logged once, with what it means.
    pub fn admit(&mut self, table: TableId, prefix: &Prefix) -> bool {
        let key = (table, *prefix);
        if self.configured.contains(&key) || self.discovered.contains(&key) {
            return true;
        }
        if self.discovered.len() < self.limit {
            self.refused.remove(&key);
            self.discovered.insert(key);
            self.fresh.push(key);
            store().vips.entry(key).or_default();
            return true;
        }
        self.refused.insert(key);
        if !self.warned {
            self.warned = true;
            tracing::warn!(
                limit = self.limit,
                %prefix,
                "more discovered VIPs than the detail limit (--max-detailed-vips): the others are \
                 classified and healed but have no series and no row in /status, counted by \
                 ribbridge_vips_without_series (configure the VIPs that matter with --vip, or \
                 raise the limit)"
            );
        }
        false
    }

    /// A discovered VIP was forgotten: its series are removed and its slot
    /// is free. A configured VIP keeps its series.
    pub fn forget(&mut self, table: TableId, prefix: &Prefix) {
        let key = (table, *prefix);
        self.refused.remove(&key);
        if self.discovered.remove(&key) {
            self.fresh.retain(|k| *k != key);
            remove_vip(table, prefix);
        }
    }

    /// The VIPs admitted since the last call, whose current state the
    /// owner publishes (a VIP whose first state is its initial one gets no
    /// state change to publish it).
    pub fn take_admitted(&mut self) -> Vec<(TableId, Prefix)> {
        std::mem::take(&mut self.fresh)
    }

    /// Does this VIP have series (and a row in `/status`)? Admits nothing.
    pub fn has(&self, table: TableId, prefix: &Prefix) -> bool {
        let key = (table, *prefix);
        self.configured.contains(&key) || self.discovered.contains(&key)
    }

    /// VIPs with series.
    pub fn admitted(&self) -> usize {
        self.configured.len() + self.discovered.len()
    }

    /// Discovered VIPs refused series and not forgotten since.
    pub fn without_series(&self) -> usize {
        self.refused.len()
    }
}

/// How many VIPs have no series (the gauge): those the gate refused and
/// that are still tracked.
pub fn vips_without_series(series: &VipSeries) -> usize {
    let n = series.without_series();
    gauge!(VIPS_WITHOUT_SERIES).set(n as f64);
    n
}
