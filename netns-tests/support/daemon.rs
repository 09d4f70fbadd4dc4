//! `ribbridge run` as a child process in a lab namespace: its log lines as a
//! stream to wait on, its status and metrics over its HTTP endpoint.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use ribbridge::status::StatusDoc;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;

use super::Lab;

/// `ribbridge run` in a namespace, its log lines as a stream.
pub struct Daemon {
    pub ns: &'static str,
    pub child: Child,
    lines: mpsc::Receiver<String>,
    pub log: Vec<String>,
    pub record: PathBuf,
    pub port: u16,
}

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
        let dir = tempfile::tempdir().expect("tempdir").keep();
        // Writable by a daemon running as another user (the record).
        std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o777))
            .expect("chmod record dir");
        let record = dir.join("events.jsonl");
        let port = 9774;
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", ns])
            .args(wrapper)
            .arg(env!("CARGO_BIN_EXE_ribbridge"))
            .args(["run", "--frr-dir"])
            .arg(frr_dir)
            .args(["--listen", &format!("127.0.0.1:{port}"), "--record"])
            .arg(&record)
            .args(args)
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = cmd.spawn().expect("spawn ribbridge");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, lines) = mpsc::channel(1024);
        tokio::spawn(async move {
            let mut r = BufReader::new(stderr).lines();
            while let Ok(Some(l)) = r.next_line().await {
                if tx.send(l).await.is_err() {
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
        }
    }

    /// Wait for a log line containing every needle (`a && b`); return it.
    pub async fn wait_log(&mut self, needles: &str, limit: Duration) -> String {
        self.wait_either(needles, needles, limit).await.1
    }

    /// Wait for a line matching `a` (true) or `b` (false); each is a list
    /// of needles joined by ` && `.
    pub async fn wait_either(&mut self, a: &str, b: &str, limit: Duration) -> (bool, String) {
        let matches = |l: &str, n: &str| n.split(" && ").all(|p| l.contains(p));
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            match tokio::time::timeout_at(deadline, self.lines.recv()).await {
                Ok(Some(l)) => {
                    self.log.push(l.clone());
                    if matches(&l, a) {
                        return (true, l);
                    }
                    if matches(&l, b) {
                        return (false, l);
                    }
                }
                Ok(None) => panic!("ribbridge exited; log:\n{}", self.log.join("\n")),
                Err(_) => panic!(
                    "no log line with {a:?} or {b:?} within {limit:?}; log:\n{}",
                    self.log.join("\n")
                ),
            }
        }
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
        self.drain();
        (took, self.record, self.log)
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
        self.drain();
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
