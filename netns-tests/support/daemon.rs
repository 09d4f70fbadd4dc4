//! `ribbridge run` as a child process in a lab namespace: its log lines as a
//! stream to wait on, its status and metrics over its HTTP endpoint.
//!
//! Every daemon records the events its core sees (`--record`). With
//! `RIBBRIDGE_KEEP_RECORDS=DIR` set, [`Daemon::stop`] and [`Daemon::kill9`]
//! keep that recording as `DIR/<test>/<namespace>[-N].jsonl` (N counts the
//! daemons a test started in that namespace), beside the `reconcile::Config`
//! the daemon ran with (`.config.json`) and `.case.json`: the test, the
//! daemon's flags and the state changes it logged. `scripts/record-cases.sh`
//! files them as the replayed cases of `tests/data/reconcile/`.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use ribbridge::config::Role;
use ribbridge::reconcile::{self, Action, Event, Millis};
use ribbridge::status::StatusDoc;
use tokio::process::{Child, Command};
use tokio::sync::mpsc;

use super::Lab;

/// `ribbridge run` in a namespace, its log lines as a stream.
pub struct Daemon {
    pub ns: &'static str,
    pub child: Child,
    lines: mpsc::UnboundedReceiver<String>,
    pub log: Vec<String>,
    pub record: PathBuf,
    pub port: u16,
    /// The flags given to `ribbridge run` after the fixture's own.
    args: Vec<String>,
    /// While true the log's reader stops reading: the pipe fills and stays
    /// full, as behind a stalled container runtime ([`Daemon::pause_log`]).
    paused: Arc<(Mutex<bool>, Condvar)>,
}

/// Set to a directory: keep every daemon's recording there (see the module
/// documentation).
pub const KEEP_RECORDS: &str = "RIBBRIDGE_KEEP_RECORDS";

impl Daemon {
    pub async fn start(lab: &Lab, ns: &'static str, args: &[&str]) -> Daemon {
        Daemon::start_with(lab, ns, args, "zebra: subscribed").await
    }

    /// Start and wait for the log line that says it is watching.
    pub async fn start_with(lab: &Lab, ns: &'static str, args: &[&str], ready: &str) -> Daemon {
        let mut d = Daemon::spawn(ns, &lab.sockdir(ns), args);
        d.wait_log(ready, Duration::from_secs(15)).await;
        d
    }

    /// Start without waiting for anything, with FRR's sockets in `frr_dir`.
    pub fn spawn(ns: &'static str, frr_dir: &Path, args: &[&str]) -> Daemon {
        Daemon::spawn_wrapped(ns, frr_dir, args, &[])
    }

    /// The same, run through `wrapper` inside the namespace (e.g.
    /// `setpriv --reuid ...`: another user, fewer capabilities).
    pub fn spawn_wrapped(
        ns: &'static str,
        frr_dir: &Path,
        args: &[&str],
        wrapper: &[&str],
    ) -> Daemon {
        Daemon::spawn_env(ns, frr_dir, args, wrapper, &[])
    }

    /// The same, with `env` set for the daemon (e.g. `FAILPOINTS`).
    ///
    /// The lab's `vip-add` writes the route without its address (FRR 8.4
    /// shadows, and 10.3 hides, a route whose address is on the node: the
    /// suites about FRR's route handling need the bare route), so unless
    /// a test says otherwise the daemon runs with `--require-address
    /// false`; the writer's suite (`writer.rs`) runs with the default.
    /// Likewise in `--mode repair` unless told ([`lab_defaults`]).
    pub fn spawn_env(
        ns: &'static str,
        frr_dir: &Path,
        args: &[&str],
        wrapper: &[&str],
        env: &[(&str, &str)],
    ) -> Daemon {
        // The lab's defaults first, so that the recorded
        // configuration (`core_config_of`) is the one the daemon ran with.
        let args: Vec<&str> = lab_defaults(args)
            .into_iter()
            .chain(args.iter().copied())
            .collect();
        let dir = tempfile::tempdir().expect("tempdir").keep();
        // Writable by a daemon running as another user (the record).
        std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o777))
            .expect("chmod record dir");
        let record = dir.join("events.jsonl");
        let port = 7585;
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", ns])
            .args(wrapper)
            .arg(env!("CARGO_BIN_EXE_ribbridge"))
            .args(["run", "--frr-dir"])
            .arg(frr_dir)
            .args(["--listen", &format!("127.0.0.1:{port}"), "--record"])
            .arg(&record)
            .arg("--drain-state")
            .arg(super::drain_state(frr_dir))
            .args(&args)
            .env("RUST_LOG", "info")
            .envs(SHIPPED_ENV)
            .envs(env.iter().copied());
        Daemon::spawn_command(ns, cmd, record, port, &args)
    }

    /// A daemon started by `cmd`, which already holds every flag: its
    /// stderr is the log, `record` the host path of its `--record` file,
    /// `port` its HTTP port on 127.0.0.1 in `ns`, `args` the flags after
    /// the fixture's own. For a daemon that is not this build's binary
    /// under `ip netns exec` (the container image: netns-tests/image.rs).
    pub fn spawn_command(
        ns: &'static str,
        mut cmd: Command,
        record: PathBuf,
        port: u16,
        args: &[&str],
    ) -> Daemon {
        cmd.stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = cmd.spawn().expect("spawn ribbridge");
        let stderr = child.stderr.take().expect("stderr");
        // Unbounded: the daemon's stderr is read as fast as it writes,
        // whether or not the test is draining the log. A bounded buffer
        // here filled during a 1 000-VIP episode, the pipe behind it
        // filled, and the daemon's logging write blocked its owner loop.
        // A thread of its own: the test's runtime may be busy in a
        // blocking call (lab.sh) while the daemon logs.
        let (tx, lines) = mpsc::unbounded_channel();
        let stderr = std::fs::File::from(stderr.into_owned_fd().expect("stderr's descriptor"));
        let paused = Arc::new((Mutex::new(false), Condvar::new()));
        let gate = paused.clone();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for l in std::io::BufReader::new(stderr).lines() {
                let (lock, cv) = &*gate;
                drop(
                    cv.wait_while(lock.lock().expect("log gate"), |p| *p)
                        .expect("log gate"),
                );
                let Ok(l) = l else { break };
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        Daemon {
            ns,
            child,
            lines,
            log: Vec::new(),
            record,
            port,
            args: args.iter().map(|a| (*a).to_string()).collect(),
            paused,
        }
    }

    /// Stop reading the daemon's stderr (the pipe stays open, unread: it
    /// fills, and a blocking write to it would block); [`Daemon::resume_log`]
    /// reads on. At most one buffered read more gets through.
    pub fn pause_log(&self) {
        *self.paused.0.lock().expect("log gate") = true;
    }

    /// Read the daemon's stderr again.
    pub fn resume_log(&self) {
        let (lock, cv) = &*self.paused;
        *lock.lock().expect("log gate") = false;
        cv.notify_all();
    }

    /// Wait for a log line containing every needle (`a && b`); return it.
    pub async fn wait_log(&mut self, needles: &str, limit: Duration) -> String {
        self.wait_either(needles, needles, limit).await.1
    }

    /// Wait for a line matching `a` (true) or `b` (false); each is a list
    /// of needles joined by ` && `.
    pub async fn wait_either(&mut self, a: &str, b: &str, limit: Duration) -> (bool, String) {
        self.try_wait_either(a, b, limit).await.unwrap_or_else(|| {
            panic!(
                "no log line with {a:?} or {b:?} within {limit:?}; log:\n{}",
                self.log.join("\n")
            )
        })
    }

    /// [`Daemon::wait_log`], None when no such line came within `limit`
    /// (for a line FRR's timing may or may not cause; the caller checks
    /// what its absence means).
    pub async fn try_wait_log(&mut self, needles: &str, limit: Duration) -> Option<String> {
        self.try_wait_either(needles, needles, limit)
            .await
            .map(|(_, l)| l)
    }

    async fn try_wait_either(
        &mut self,
        a: &str,
        b: &str,
        limit: Duration,
    ) -> Option<(bool, String)> {
        let matches = |l: &str, n: &str| n.split(" && ").all(|p| l.contains(p));
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            match tokio::time::timeout_at(deadline, self.lines.recv()).await {
                Ok(Some(l)) => {
                    self.log.push(l.clone());
                    if matches(&l, a) {
                        return Some((true, l));
                    }
                    if matches(&l, b) {
                        return Some((false, l));
                    }
                }
                Ok(None) => panic!("ribbridge exited; log:\n{}", self.log.join("\n")),
                Err(_) => return None,
            }
        }
    }

    /// Like [`Daemon::wait_log`], but a line already collected counts too
    /// (for lines whose order against the last awaited one may vary).
    pub async fn seen_or_wait(&mut self, needles: &str, limit: Duration) -> String {
        let matches = |l: &String| needles.split(" && ").all(|p| l.contains(p));
        if let Some(l) = self.drain().iter().find(|l| matches(l)) {
            return l.clone();
        }
        self.wait_log(needles, limit).await
    }

    /// Collect every line logged so far without waiting.
    pub fn drain(&mut self) -> &[String] {
        while let Ok(l) = self.lines.try_recv() {
            self.log.push(l);
        }
        &self.log
    }

    /// `ribbridge status --json` against the daemon; (document, exit code).
    pub async fn status(&self) -> (StatusDoc, i32) {
        let out = Command::new("ip")
            .args(["netns", "exec", self.ns])
            .arg(env!("CARGO_BIN_EXE_ribbridge"))
            .args([
                "status",
                "--json",
                "--endpoint",
                &format!("http://127.0.0.1:{}", self.port),
            ])
            .output()
            .await
            .expect("ribbridge status");
        let doc = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "status --json is not a document ({e}): {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        });
        (doc, out.status.code().unwrap_or(-1))
    }

    pub async fn metrics(&self) -> String {
        self.http("GET /metrics HTTP/1.1\\r\\n\\r\\n").await
    }

    /// SIGTERM; returns how long the daemon took to exit.
    pub async fn stop(mut self) -> (Duration, PathBuf, Vec<String>) {
        let pid = self.child.id().expect("pid");
        let t = Instant::now();
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(i32::try_from(pid).expect("pid")),
            nix::sys::signal::Signal::SIGTERM,
        )
        .expect("SIGTERM");
        let status = tokio::time::timeout(Duration::from_secs(5), self.child.wait())
            .await
            .expect("ribbridge did not stop within 5 s of SIGTERM")
            .expect("wait");
        let took = t.elapsed();
        assert!(status.success(), "ribbridge exited with {status}");
        self.keep().await;
        (took, self.record, self.log)
    }

    /// After the daemon exited: read its log to the end, and with
    /// [`KEEP_RECORDS`] set keep its recording (module documentation).
    async fn keep(&mut self) {
        // The log's reader ends with the daemon's stderr; what it has not
        // passed on yet is part of the log (the last state changes).
        let end = tokio::time::Instant::now() + Duration::from_secs(2);
        while let Ok(Some(l)) = tokio::time::timeout_at(end, self.lines.recv()).await {
            self.log.push(l);
        }
        let Some(dir) = std::env::var_os(KEEP_RECORDS) else {
            return;
        };
        let thread = std::thread::current();
        let test = thread
            .name()
            .and_then(|n| n.rsplit("::").next())
            .unwrap_or("unnamed");
        let dir = PathBuf::from(dir).join(test);
        std::fs::create_dir_all(&dir)
            .unwrap_or_else(|e| panic!("{KEEP_RECORDS}: cannot create {}: {e}", dir.display()));
        let mut stem = self.ns.to_string();
        let mut n = 1;
        while dir.join(format!("{stem}.jsonl")).exists() {
            n += 1;
            stem = format!("{}-{n}", self.ns);
        }
        let to = |ext: &str| dir.join(format!("{stem}.{ext}"));
        std::fs::copy(&self.record, to("jsonl")).unwrap_or_else(|e| {
            panic!("{KEEP_RECORDS}: cannot copy {}: {e}", self.record.display())
        });
        let config = case_config_of(&self.args).unwrap_or_else(|e| {
            panic!(
                "{KEEP_RECORDS}: the core's configuration of {:?}: {e}",
                self.args
            )
        });
        let logged = logged_changes(&self.log);
        let write = |ext: &str, v: &serde_json::Value| {
            let text = serde_json::to_string_pretty(v).expect("json") + "\n";
            std::fs::write(to(ext), text).unwrap_or_else(|e| {
                panic!("{KEEP_RECORDS}: cannot write {}: {e}", to(ext).display())
            });
        };
        write("config.json", &config);
        // A `--config` file is a temporary path: its effect is in
        // config.json, its name is noise.
        let mut args = self.args.clone();
        for i in 1..args.len() {
            if args[i - 1] == "--config" {
                args[i] = "FILE".to_string();
            }
        }
        write(
            "case.json",
            &serde_json::json!({
                "source": thread.name().unwrap_or("unnamed"),
                "daemon": stem,
                "args": args,
                "logged": logged,
            }),
        );
        // The recording is only worth keeping if it replays to what the
        // daemon logged: say so at once, not when the case is filed.
        let replayed = replay_changes(&self.record, &config);
        if replayed != logged {
            eprintln!(
                "{KEEP_RECORDS}: {test}/{stem}: the replay's state changes differ from the daemon's log:\nreplayed {replayed:?}\nlogged   {logged:?}"
            );
        }
        eprintln!("{KEEP_RECORDS}: kept {}", to("jsonl").display());
    }

    /// The daemon's pid (`ip netns exec` execs it in place).
    pub fn pid(&self) -> nix::unistd::Pid {
        let pid = self.child.id().expect("ribbridge is running");
        nix::unistd::Pid::from_raw(i32::try_from(pid).expect("pid"))
    }

    /// SIGKILL (a crash); waits for it to be reaped and returns its log.
    pub async fn kill9(mut self) -> Vec<String> {
        nix::sys::signal::kill(self.pid(), nix::sys::signal::Signal::SIGKILL).expect("SIGKILL");
        let status = self.child.wait().await.expect("wait");
        assert!(!status.success(), "SIGKILL ends it: {status}");
        self.keep().await;
        self.log
    }

    /// Peak resident memory so far (`VmHWM`), in KiB.
    pub fn peak_rss_kib(&self) -> u64 {
        let text = std::fs::read_to_string(format!("/proc/{}/status", self.pid()))
            .expect("/proc/PID/status");
        text.lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmHWM in /proc/PID/status")
    }

    /// A raw HTTP request to the daemon's endpoint; the whole response.
    pub async fn http(&self, request: &str) -> String {
        let out = Command::new("ip")
            .args(["netns", "exec", self.ns, "bash", "-c"])
            .arg(format!(
                "exec 3<>/dev/tcp/127.0.0.1/{}; printf '{request}' >&3; cat <&3",
                self.port
            ))
            .output()
            .await
            .expect("http request");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

/// One state change of a VIP: (prefix, table, new class), as the daemon
/// logs it and as the core's `StateChanged` says it.
pub type Change = (String, u32, String);

/// The state changes the daemon logged (`VIP drift` / `VIP consistent`
/// lines), in order.
pub fn logged_changes(log: &[String]) -> Vec<Change> {
    let field = |l: &str, key: &str| {
        l.split(&format!(" {key}="))
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .map(str::to_string)
    };
    log.iter()
        .filter(|l| l.contains("VIP drift") || l.contains("VIP consistent"))
        .filter_map(|l| {
            Some((
                field(l, "prefix")?,
                field(l, "table")?.parse().ok()?,
                field(l, "to")?,
            ))
        })
        .collect()
}

/// The state changes of a recording replayed through the join it ran
/// (`config`: the case's `config.json`).
pub fn replay_changes(record: &Path, config: &serde_json::Value) -> Vec<Change> {
    let text = std::fs::read_to_string(record).expect("record");
    let mut join = reconcile::Replay::from_case(config).expect("the case's config.json");
    let mut changes = Vec::new();
    for line in text.lines() {
        let (t, e): (Millis, Event) = serde_json::from_str(line).expect("record line");
        for a in join.step(e, t) {
            if let Action::StateChanged {
                table, prefix, to, ..
            } = a
            {
                changes.push((prefix.to_string(), table, to.name().to_string()));
            }
        }
    }
    changes
}

/// The core's configuration a daemon started with `args` runs with, read by
/// the CLI's own parser and resolution (`cli::run_settings`), so it cannot
/// drift from what `ribbridge run` does.
pub fn core_config_of(args: &[String]) -> Result<reconcile::Config, String> {
    let s = ribbridge::cli::run_settings(args).map_err(|e| e.to_string())?;
    match &s.role {
        Role::Node(node) => Ok(ribbridge::daemon::core_config(&s, node)),
        Role::Router(_) | Role::Station(_) => {
            Err(format!("a {} ribbridge runs no node core", s.vantage()))
        }
    }
}

/// A recorded case's `config.json` for a daemon started with `args`: the
/// node's core configuration, or the router's join (its tables and VIPs,
/// `tests/reconcile_cases.rs` replays it through `RouterJoin`).
fn case_config_of(args: &[String]) -> Result<serde_json::Value, String> {
    let s = ribbridge::cli::run_settings(args).map_err(|e| e.to_string())?;
    match &s.role {
        Role::Node(node) => serde_json::to_value(ribbridge::daemon::core_config(&s, node))
            .map_err(|e| e.to_string()),
        Role::Router(router) => Ok(serde_json::json!({
            "vantage": "router",
            "tables": router.tables,
            "vips": s.vips,
        })),
        Role::Station(_) => Err("a BMP station records no core case".to_string()),
    }
}

/// The environment the image and the systemd unit give the daemon
/// (deploy/): one malloc arena.
pub const SHIPPED_ENV: [(&str, &str); 1] = [("MALLOC_ARENA_MAX", "1")];

/// The lab's own defaults, each unless `args` set it themselves (see
/// [`Daemon::spawn_env`]): `--require-address false` (the lab's VIPs are
/// bare routes) and `--mode repair` (most suites are about what the daemon
/// heals; a bare `ribbridge run` observes).
pub fn lab_defaults(args: &[&str]) -> Vec<&'static str> {
    let mut out = Vec::new();
    if !args.iter().any(|a| a.starts_with("--require-address")) {
        out.extend(["--require-address", "false"]);
    }
    if !args.iter().any(|a| a.starts_with("--mode")) {
        out.extend(["--mode", "repair"]);
    }
    out
}
