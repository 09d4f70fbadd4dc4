//! The backends' health and readiness probes (so that a VIP whose backend
//! is down or draining is not reported served), as
//! keepalived checks them: per VIP, an optional `health` probe (down: this
//! node cannot serve the VIP) and an optional `ready` probe (failing while
//! health passes: the node is draining). Each is an HTTP or HTTPS `GET` of a
//! URL, healthy iff the answer's status is the expected one (200 unless
//! told otherwise).
//!
//! Contract:
//!
//! - The pure part has no I/O and no clock. [`Url`] parses
//!   `http[s]://HOST[:PORT][/PATH[?QUERY]]` and refuses anything else by a
//!   [`UrlError`] that names the bad part and the accepted form;
//!   [`ProbeSpec::validate`] judges a spec as a whole ([`SpecError`]): an
//!   `https` URL needs a `ca_file` or `insecure` (the shipped image has no
//!   system trust store), and neither is allowed on `http`. [`Hysteresis`]
//!   turns outcomes into a [`State`] keepalived's way: `fall` consecutive
//!   failures turn a probe that is up (or unknown) down, `rise` consecutive
//!   successes turn a probe that is down (or unknown) up; it starts
//!   [`State::Unknown`] and stays there until one of the two happens, so a
//!   probe that alternates forever is never called up. [`Reason::name`] and
//!   [`State::name`] are stable snake_case words for metric labels.
//!   [`parse_flag`] reads the flag form `PREFIX=URL`, [`VipProbes`] the
//!   configuration file's `[[vip]]` table.
//! - [`probe_once`] (in `check`) does one `GET` over a tokio `TcpStream`
//!   (tokio-rustls for `https`), `Connection: close`, `Host`, `User-Agent:
//!   ribbridge-probe`, reads the answer's head only, the whole exchange,
//!   name resolution included, under the spec's timeout; it never fails, it
//!   reports an [`Outcome`] and how long it took. [`TlsConfig`] is built
//!   once per spec ([`TlsConfig::for_spec`]: the CA file read and parsed at
//!   that moment, a [`TlsError`] naming the file); `insecure` is `curl -k`:
//!   no certificate check, the handshake's signatures still verified.
//! - [`run`] (in `runner`) probes every [`Probe`] on its own
//!   `tokio::time::interval` (missed ticks delayed, first ticks spread over
//!   one interval), at most `limit` probes in flight at once (a semaphore),
//!   and sends **every** outcome as a [`ProbeReport`] (the owner keeps the
//!   metrics: probe durations, failures by reason) on a bounded channel
//!   with `try_send`: when the channel is full the report is dropped and
//!   counted in [`Dropped`], a probe never blocks on its owner. A dropped
//!   report loses no transition: a report's `changed` says that its `state`
//!   differs from the last state *delivered* for that probe, so the next
//!   report that gets through carries the change. `run` returns when the
//!   receiver is dropped (or panics when a probe task panicked: a bug).
//!
//! The module depends on `model` only; the daemon wires it (metrics in
//! `telemetry`, the VIP's verdict in the core).

mod check;
mod runner;
mod spec;

pub use check::{TlsConfig, TlsError, probe_once};
pub use runner::{Dropped, Probe, ProbeError, ProbeReport, run};
pub use spec::{
    DEFAULT_EXPECT_STATUS, DEFAULT_FALL, DEFAULT_INTERVAL_MS, DEFAULT_RISE, DEFAULT_TIMEOUT_MS,
    FlagError, ProbeSpec, Scheme, SpecError, Url, UrlError, VipProbes, parse_flag,
};

use crate::model::{Prefix, TableId};

/// Which of a VIP's two probes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// Down: this node cannot serve the VIP.
    Health,
    /// Failing while health passes: the node is draining.
    Ready,
}

impl Kind {
    /// The stable label: `health` or `ready`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Health => "health",
            Kind::Ready => "ready",
        }
    }
}

/// The usual key of a probe: the VIP's table and prefix, and which probe.
/// [`run`] takes any key; this is the one the daemon is expected to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key {
    /// The kernel table the VIP is watched in.
    pub table: TableId,
    /// The VIP.
    pub prefix: Prefix,
    /// Health or ready.
    pub kind: Kind,
}

/// Why a probe failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reason {
    /// The TCP connection was refused (nothing listens on the port).
    Refused,
    /// No answer within the timeout (connection, handshake or head).
    Timeout,
    /// An answer whose status is not the expected one.
    Status(u16),
    /// The TLS handshake failed (certificate not trusted, wrong name,
    /// protocol error) or an `https` probe had no TLS configuration.
    Tls,
    /// Anything else: a name that does not resolve, an unreachable host, a
    /// reset, an answer that is not HTTP/1.
    Other,
}

impl Reason {
    /// The stable metric label: `refused`, `timeout`, `status`, `tls`,
    /// `other`.
    pub fn name(self) -> &'static str {
        match self {
            Reason::Refused => "refused",
            Reason::Timeout => "timeout",
            Reason::Status(_) => "status",
            Reason::Tls => "tls",
            Reason::Other => "other",
        }
    }
}

/// One probe's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// The expected status.
    Ok,
    /// Anything else.
    Fail(Reason),
}

impl Outcome {
    /// The probe succeeded.
    pub fn is_ok(self) -> bool {
        self == Outcome::Ok
    }

    /// The stable label: `ok`, or the reason's [`Reason::name`].
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Fail(r) => r.name(),
        }
    }
}

/// A probe's state after its outcomes so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum State {
    /// Neither `rise` successes nor `fall` failures in a row yet.
    #[default]
    Unknown,
    /// Passing.
    Up,
    /// Failing.
    Down,
}

impl State {
    /// The stable label: `unknown`, `up` or `down`.
    pub fn name(self) -> &'static str {
        match self {
            State::Unknown => "unknown",
            State::Up => "up",
            State::Down => "down",
        }
    }
}

/// What one outcome did to a [`Hysteresis`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// The state after the outcome.
    pub state: State,
    /// The outcome changed the state.
    pub changed: bool,
}

/// keepalived's `fall` and `rise`: consecutive outcomes needed to change a
/// probe's state. Pure; one per probe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hysteresis {
    fall: u32,
    rise: u32,
    state: State,
    successes: u32,
    failures: u32,
}

impl Hysteresis {
    /// A probe in [`State::Unknown`]. A count of 0 counts as 1
    /// ([`ProbeSpec::validate`] refuses 0).
    pub fn new(fall: u32, rise: u32) -> Hysteresis {
        Hysteresis {
            fall: fall.max(1),
            rise: rise.max(1),
            state: State::Unknown,
            successes: 0,
            failures: 0,
        }
    }

    /// The state now.
    pub fn state(&self) -> State {
        self.state
    }

    /// Take one outcome: `rise` successes in a row make the probe up,
    /// `fall` failures in a row make it down; any other outcome only counts.
    pub fn observe(&mut self, outcome: Outcome) -> Step {
        let before = self.state;
        if outcome.is_ok() {
            self.failures = 0;
            self.successes = self.successes.saturating_add(1);
            if self.successes >= self.rise {
                self.state = State::Up;
            }
        } else {
            self.successes = 0;
            self.failures = self.failures.saturating_add(1);
            if self.failures >= self.fall {
                self.state = State::Down;
            }
        }
        Step {
            state: self.state,
            changed: self.state != before,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: Outcome = Outcome::Ok;
    const FAIL: Outcome = Outcome::Fail(Reason::Refused);

    fn run(h: &mut Hysteresis, outcomes: &[Outcome]) -> Vec<(State, bool)> {
        outcomes
            .iter()
            .map(|o| {
                let s = h.observe(*o);
                (s.state, s.changed)
            })
            .collect()
    }

    #[test]
    fn starts_unknown_and_rises_after_rise_successes() {
        let mut h = Hysteresis::new(3, 2);
        assert_eq!(h.state(), State::Unknown);
        assert_eq!(
            run(&mut h, &[OK, OK, OK]),
            [
                (State::Unknown, false),
                (State::Up, true),
                (State::Up, false)
            ]
        );
    }

    #[test]
    fn unknown_falls_after_fall_failures() {
        let mut h = Hysteresis::new(2, 3);
        assert_eq!(
            run(&mut h, &[FAIL, FAIL]),
            [(State::Unknown, false), (State::Down, true)]
        );
    }

    #[test]
    fn up_falls_only_after_fall_consecutive_failures() {
        let mut h = Hysteresis::new(3, 1);
        assert_eq!(h.observe(OK).state, State::Up);
        // Two failures, a success (resets the count), three failures.
        let got = run(&mut h, &[FAIL, FAIL, OK, FAIL, FAIL, FAIL]);
        assert_eq!(
            got,
            [
                (State::Up, false),
                (State::Up, false),
                (State::Up, false),
                (State::Up, false),
                (State::Up, false),
                (State::Down, true)
            ]
        );
    }

    #[test]
    fn down_rises_only_after_rise_consecutive_successes() {
        let mut h = Hysteresis::new(1, 3);
        assert_eq!(h.observe(FAIL).state, State::Down);
        let got = run(&mut h, &[OK, OK, FAIL, OK, OK, OK, FAIL]);
        assert_eq!(
            got,
            [
                (State::Down, false),
                (State::Down, false),
                (State::Down, false),
                (State::Down, false),
                (State::Down, false),
                (State::Up, true),
                (State::Down, true)
            ]
        );
    }

    #[test]
    fn alternating_outcomes_stay_unknown() {
        let mut h = Hysteresis::new(2, 2);
        for _ in 0..10 {
            assert_eq!(h.observe(OK).state, State::Unknown);
            assert_eq!(h.observe(FAIL).state, State::Unknown);
        }
    }

    #[test]
    fn zero_counts_act_as_one() {
        let mut h = Hysteresis::new(0, 0);
        assert_eq!(
            h.observe(OK),
            Step {
                state: State::Up,
                changed: true
            }
        );
        assert_eq!(
            h.observe(FAIL),
            Step {
                state: State::Down,
                changed: true
            }
        );
    }

    #[test]
    fn labels_are_stable() {
        let reasons = [
            Reason::Refused,
            Reason::Timeout,
            Reason::Status(503),
            Reason::Tls,
            Reason::Other,
        ];
        let names: Vec<_> = reasons.iter().map(|r| r.name()).collect();
        assert_eq!(names, ["refused", "timeout", "status", "tls", "other"]);
        assert_eq!(Outcome::Ok.name(), "ok");
        assert_eq!(Outcome::Fail(Reason::Status(500)).name(), "status");
        assert_eq!(
            [State::Unknown, State::Up, State::Down].map(State::name),
            ["unknown", "up", "down"]
        );
        assert_eq!(
            [Kind::Health, Kind::Ready].map(Kind::name),
            ["health", "ready"]
        );
    }
}
