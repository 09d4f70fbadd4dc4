//! The probes' tasks: each on its own interval, a bounded number in flight,
//! every outcome reported without ever blocking on the owner.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinSet;
use tokio::time::{Instant, MissedTickBehavior};

use super::check::{TlsConfig, TlsError, attempt};
use super::{Hysteresis, Outcome, ProbeSpec, SpecError, State};

/// A probe ready to run: its key, its validated spec and its TLS
/// configuration (the CA file read).
#[derive(Debug, Clone)]
pub struct Probe<K> {
    key: K,
    spec: ProbeSpec,
    tls: Option<TlsConfig>,
}

/// Why a [`Probe`] cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The spec is refused.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// The TLS configuration (the CA file) is refused.
    #[error(transparent)]
    Tls(#[from] TlsError),
}

impl<K> Probe<K> {
    /// Validate `spec` and build its TLS configuration (reads the CA file).
    pub fn new(key: K, spec: ProbeSpec) -> Result<Probe<K>, ProbeError> {
        spec.validate()?;
        let tls = TlsConfig::for_spec(&spec)?;
        Ok(Probe { key, spec, tls })
    }

    /// The key.
    pub fn key(&self) -> &K {
        &self.key
    }

    /// The spec.
    pub fn spec(&self) -> &ProbeSpec {
        &self.spec
    }
}

/// One probe's outcome, as [`run`] sends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeReport<K> {
    /// Which probe.
    pub key: K,
    /// This probe's result.
    pub outcome: Outcome,
    /// How long it took (connection, TLS and the answer's head).
    pub took: Duration,
    /// The probe's state after it.
    pub state: State,
    /// `state` differs from the state of the last report of this probe that
    /// reached the channel (a report dropped on a full channel does not
    /// count): a transition is never lost. The first report's reference is
    /// [`State::Unknown`].
    pub changed: bool,
    /// Why it failed, for a log line (`None` when it succeeded).
    pub detail: Option<String>,
}

/// The reports dropped because the channel was full: [`run`] adds, the
/// daemon reads and exports. Cheap to clone (one shared counter).
#[derive(Debug, Clone, Default)]
pub struct Dropped(Arc<AtomicU64>);

impl Dropped {
    /// Reports dropped so far.
    pub fn count(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    fn add(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// The last state that reached the owner, and whether a new one differs.
#[derive(Debug, Clone, Copy, Default)]
struct Delivered(State);

impl Delivered {
    fn changed(self, now: State) -> bool {
        self.0 != now
    }
}

/// Run every probe until the receiver of `tx` is dropped: each on its own
/// interval (missed ticks delayed; the first ticks spread over the first
/// interval, so probes added together do not fire together), at most
/// `limit` (at least 1) in flight at once, every outcome sent with
/// `try_send`; a full channel drops the report and counts it in `dropped`.
/// Panics when a probe task panicked (a bug), so a supervisor sees it.
pub async fn run<K>(
    probes: Vec<Probe<K>>,
    tx: mpsc::Sender<ProbeReport<K>>,
    limit: usize,
    dropped: Dropped,
) where
    K: Clone + Send + Sync + 'static,
{
    let slots = Arc::new(Semaphore::new(limit.max(1)));
    let n = probes.len() as u128;
    let start = Instant::now();
    let mut tasks = JoinSet::new();
    for (i, probe) in probes.into_iter().enumerate() {
        let interval = probe.spec.interval();
        // i/n of the interval; fits: i < n and the interval is in ms.
        let offset = interval.as_nanos() * i as u128 / n.max(1);
        let first = start + Duration::from_nanos(u64::try_from(offset).unwrap_or(u64::MAX));
        tasks.spawn(one(
            probe,
            tx.clone(),
            slots.clone(),
            dropped.clone(),
            first,
        ));
    }
    let closed = tx.clone();
    drop(tx);
    tokio::select! {
        () = closed.closed() => {}
        () = async {
            while let Some(r) = tasks.join_next().await {
                if let Err(e) = r
                    && e.is_panic()
                {
                    std::panic::resume_unwind(e.into_panic());
                }
            }
            // Every probe ended: the receiver is gone.
            closed.closed().await;
        } => {}
    }
    // Dropping the set aborts the probes still running.
}

async fn one<K: Clone>(
    probe: Probe<K>,
    tx: mpsc::Sender<ProbeReport<K>>,
    slots: Arc<Semaphore>,
    dropped: Dropped,
    first: Instant,
) {
    let Probe { key, spec, tls } = probe;
    let mut tick = tokio::time::interval_at(first, spec.interval());
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut hysteresis = Hysteresis::new(spec.fall, spec.rise);
    let mut delivered = Delivered::default();
    loop {
        tick.tick().await;
        let (result, took) = {
            let Ok(_slot) = slots.acquire().await else {
                return;
            };
            attempt(&spec, tls.as_ref()).await
        };
        let (outcome, detail) = match result {
            Ok(()) => (Outcome::Ok, None),
            Err(f) => (Outcome::Fail(f.reason), Some(f.detail)),
        };
        let state = hysteresis.observe(outcome).state;
        let report = ProbeReport {
            key: key.clone(),
            outcome,
            took,
            state,
            changed: delivered.changed(state),
            detail,
        };
        match tx.try_send(report) {
            Ok(()) => delivered = Delivered(state),
            Err(mpsc::error::TrySendError::Full(_)) => dropped.add(),
            Err(mpsc::error::TrySendError::Closed(_)) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU16, AtomicUsize};

    use tokio::net::TcpListener;

    use super::super::check::tests::serve;
    use super::super::{Reason, Scheme};
    use super::*;

    /// The next report, or a failed test after 10 s (never a hung one).
    async fn next<K>(rx: &mut mpsc::Receiver<ProbeReport<K>>) -> ProbeReport<K> {
        tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .expect("a report within 10 s")
            .expect("the runner is running")
    }

    fn fast(url: &str, fall: u32, rise: u32) -> ProbeSpec {
        ProbeSpec {
            interval_ms: 200,
            timeout_ms: 200,
            fall,
            rise,
            ..ProbeSpec::parse(url).unwrap()
        }
    }

    #[test]
    fn delivered_state_decides_changed() {
        let d = Delivered::default();
        assert!(!d.changed(State::Unknown));
        assert!(d.changed(State::Up));
        // Up was dropped: the next Up still reports the change.
        assert!(d.changed(State::Up));
        assert!(!Delivered(State::Up).changed(State::Up));
        assert!(Delivered(State::Up).changed(State::Down));
    }

    #[test]
    fn probe_new_validates_and_reads_the_ca_file() {
        let e = Probe::new(1, ProbeSpec::parse("https://h/").unwrap()).unwrap_err();
        assert!(
            matches!(e, ProbeError::Spec(SpecError::NoTrust { .. })),
            "{e}"
        );
        let spec = ProbeSpec {
            ca_file: Some("/nonexistent/ca.pem".into()),
            ..ProbeSpec::parse("https://h/").unwrap()
        };
        let e = Probe::new(1, spec).unwrap_err();
        assert!(matches!(e, ProbeError::Tls(TlsError::Read { .. })), "{e}");
        let p = Probe::new("k", ProbeSpec::parse("http://h/").unwrap()).unwrap();
        assert_eq!((*p.key(), p.spec().url.scheme()), ("k", Scheme::Http));
    }

    #[tokio::test]
    async fn reports_every_outcome_and_each_transition_once() {
        let status = Arc::new(AtomicU16::new(200));
        let port = serve(status.clone(), None).await;
        let spec = fast(&format!("http://127.0.0.1:{port}/"), 2, 2);
        let probes = vec![Probe::new("api", spec).unwrap()];
        let (tx, mut rx) = mpsc::channel(64);
        let dropped = Dropped::default();
        let runner = tokio::spawn(run(probes, tx, 4, dropped.clone()));

        let mut seen = Vec::new();
        while seen.len() < 3 {
            let r = next(&mut rx).await;
            assert_eq!(r.key, "api");
            seen.push((r.outcome, r.state, r.changed));
        }
        assert_eq!(
            seen,
            [
                (Outcome::Ok, State::Unknown, false),
                (Outcome::Ok, State::Up, true),
                (Outcome::Ok, State::Up, false),
            ]
        );
        status.store(503, Ordering::SeqCst);
        // Up until two failures in a row, then down, once.
        let mut changes = 0;
        loop {
            let r = next(&mut rx).await;
            if r.outcome == Outcome::Ok {
                continue; // a probe already in flight
            }
            assert_eq!(r.outcome, Outcome::Fail(Reason::Status(503)));
            assert!(r.detail.as_deref().unwrap().contains("503"));
            changes += usize::from(r.changed);
            if r.state == State::Down {
                assert!(r.changed);
                break;
            }
        }
        assert_eq!(changes, 1);
        let r = next(&mut rx).await;
        assert_eq!((r.state, r.changed), (State::Down, false));
        assert_eq!(dropped.count(), 0);

        // The receiver gone, the runner ends.
        drop(rx);
        tokio::time::timeout(Duration::from_secs(5), runner)
            .await
            .unwrap()
            .unwrap();
    }

    #[tokio::test]
    async fn a_full_channel_drops_and_counts_never_blocks() {
        let port = serve(Arc::new(AtomicU16::new(200)), None).await;
        let probes = (0..3)
            .map(|i| Probe::new(i, fast(&format!("http://127.0.0.1:{port}/"), 1, 1)).unwrap())
            .collect();
        let (tx, mut rx) = mpsc::channel(1);
        let dropped = Dropped::default();
        let runner = tokio::spawn(run(probes, tx, 8, dropped.clone()));
        // Nobody reads for a while: the probes go on and drop.
        let deadline = Instant::now() + Duration::from_secs(10);
        while dropped.count() < 3 {
            assert!(Instant::now() < deadline, "no report dropped");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // The one report that got through: fall and rise 1, so its state is
        // known and, the first delivered, a change.
        let first = next(&mut rx).await;
        assert_ne!(first.state, State::Unknown);
        assert!(first.changed);
        runner.abort();
    }

    #[tokio::test]
    async fn at_most_limit_probes_in_flight() {
        // A server that counts open connections and answers after 50 ms.
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let open = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let (o, m) = (open.clone(), most.clone());
        tokio::spawn(async move {
            use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
            while let Ok((mut tcp, _)) = listener.accept().await {
                let (o, m) = (o.clone(), m.clone());
                tokio::spawn(async move {
                    let now = o.fetch_add(1, Ordering::SeqCst) + 1;
                    m.fetch_max(now, Ordering::SeqCst);
                    let mut buf = [0; 1024];
                    let _ = tcp.read(&mut buf).await;
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    o.fetch_sub(1, Ordering::SeqCst);
                    let _ = tcp
                        .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
                        .await;
                });
            }
        });
        let spec = ProbeSpec {
            interval_ms: 200,
            timeout_ms: 200,
            ..ProbeSpec::parse(&format!("http://127.0.0.1:{port}/")).unwrap()
        };
        let probes = (0..6)
            .map(|i| Probe::new(i, spec.clone()).unwrap())
            .collect();
        let (tx, mut rx) = mpsc::channel(256);
        let runner = tokio::spawn(run(probes, tx, 2, Dropped::default()));
        let mut ok = 0;
        while ok < 12 {
            if next(&mut rx).await.outcome == Outcome::Ok {
                ok += 1;
            }
        }
        runner.abort();
        let most = most.load(Ordering::SeqCst);
        assert!((1..=2).contains(&most), "{most} probes in flight at once");
    }

    #[tokio::test]
    async fn no_probes_returns_when_the_receiver_goes() {
        let (tx, rx) = mpsc::channel::<ProbeReport<u8>>(1);
        let runner = tokio::spawn(run(Vec::new(), tx, 1, Dropped::default()));
        tokio::task::yield_now().await;
        assert!(!runner.is_finished());
        drop(rx);
        tokio::time::timeout(Duration::from_secs(5), runner)
            .await
            .unwrap()
            .unwrap();
    }
}
