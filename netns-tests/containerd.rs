//! The shipped static pod through a real container runtime: Debian's
//! containerd 1.6 with its CRI plugin, started by the test inside
//! rb-node1's network namespace (so a hostNetwork pod shares the node's),
//! with its own configuration, state and socket in a temporary directory,
//! and driven through the CRI v1 API as kubelet drives it
//! (scripts/cri.py). No registry: the sandbox image
//! (scripts/build-pause-image.sh), the ribbridge image and its failpoints
//! build (scripts/build-image.sh; `RIBBRIDGE_IMAGE` and
//! `RIBBRIDGE_FAILPOINTS_IMAGE` name built ones) are imported from
//! `podman save`.
//!
//! scripts/oci-spec.py --cri turns deploy/openshift/0005-ribbridge-repair.yaml
//! (the static pod; its ContainerConfig is ribbridge-container-repair.yaml's
//! but for the pod's seccompProfile, checked here) into the PodSandboxConfig and ContainerConfig kubelet
//! would send: hostNetwork, the container's image, args, securityContext
//! (runAsUser 0, capabilities, readOnlyRootFilesystem,
//! allowPrivilegeEscalation false, the pod's seccompProfile RuntimeDefault,
//! kubelet's masked and read-only /proc paths), its hostPath volumes (the
//! lab's FRR socket directory as `frr-sockets`) and env; FRR's ids replaced
//! as in cri.rs.
//!
//! - the runtime's spec holds what the manifest asks (seccomp filter,
//!   masked paths, read-only root, the four capabilities) and the process
//!   runs under it: seccomp in filter mode, FRR's user with CAP_NET_ADMIN
//!   alone;
//! - each probe of the manifest answers 200 on its endpoint, from the
//!   node's namespace as kubelet probes a hostNetwork pod;
//! - repair: 10.7's `kernel_only` drift is healed, router back to 2 paths;
//! - the preStop hook through the CRI's ExecSync drains node1, then
//!   StopContainer ends it with exit code 0;
//! - the failpoints image with FAILPOINTS in env: the kernel watcher (an
//!   essential task) fails, the container exits with code 4 and the CRI's
//!   ContainerStatus reports it.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use tokio::process::Command;

use crate::cri::{check, expect_creds, oci_spec};
use crate::image::built;
use crate::privilege::frr_id;
use crate::supervision::await_code;
use crate::support::daemon::Daemon;
use crate::support::{creds_full, lab, owned_dir, repo, venv_python};

const FRR: &str = "10.7";
/// The prefix the failpoint is armed for (as in supervision.rs).
const POISON: &str = "192.0.2.66/32";
const NODE: &str = "rb-node1";
/// The manifests' listen port.
const PORT: u16 = 7585;
const MANIFEST: &str = "deploy/openshift/0005-ribbridge-repair.yaml";
/// The same container, alone (for the frr-k8s static pod).
const REPAIR: &str = "deploy/openshift/ribbridge-container-repair.yaml";

fn vip_addr() -> std::net::IpAddr {
    "192.0.2.10".parse().expect("address")
}

/// A containerd of this test's own, in `NODE`'s network namespace; dropping
/// it removes every pod it ran, ends it and its shims, and removes its
/// state (also when the test panics).
struct Containerd {
    dir: tempfile::TempDir,
    child: std::process::Child,
    pods: Vec<String>,
}

impl Containerd {
    fn socket(&self) -> PathBuf {
        self.dir.path().join("containerd.sock")
    }

    /// containerd's configuration: everything under `dir`, the CRI's
    /// sandbox image the local pause image, runc without systemd (the
    /// machine's PID 1 is not systemd: cgroupfs), no CNI (hostNetwork pods
    /// only). `restrict_oom_score_adj`: a sandbox whose root lacks
    /// CAP_SYS_RESOURCE cannot lower a score (kubelet asks -997/-998).
    fn config(dir: &Path, pause: &str) -> String {
        let d = dir.display();
        format!(
            r#"version = 2
root = "{d}/root"
state = "{d}/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = "{d}/containerd.sock"
[ttrpc]
  address = "{d}/containerd.sock.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "{d}/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{pause}"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  disable_apparmor = true
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "{d}/cni/bin"
    conf_dir = "{d}/cni/conf"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "{d}/runc"
"#
        )
    }

    /// Start it in `NODE`'s network namespace (nsenter: only the network
    /// namespace; `ip netns exec` would remount /sys and hide the cgroup
    /// filesystems runc needs), wait until its CRI answers, import
    /// `images`.
    fn start(pause: &str, images: &[&str]) -> Containerd {
        let dir = tempfile::Builder::new()
            .prefix("rb-containerd-")
            .tempdir()
            .expect("tempdir");
        let config = dir.path().join("config.toml");
        std::fs::write(&config, Containerd::config(dir.path(), pause)).expect("config.toml");
        let log = std::fs::File::create(dir.path().join("containerd.log")).expect("log");
        let child = StdCommand::new("nsenter")
            .arg(format!("--net=/run/netns/{NODE}"))
            .arg("containerd")
            .arg("--config")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .expect("nsenter containerd (scripts/install-deps.sh installs containerd)");
        let mut rt = Containerd {
            dir,
            child,
            pods: Vec::new(),
        };
        let t = Instant::now();
        loop {
            if let Some(st) = rt.child.try_wait().expect("wait containerd") {
                panic!("containerd exited: {st}\n{}", rt.log());
            }
            let out = rt.cri_output(&["version"]);
            if out.status.success() {
                eprintln!(
                    "containerd: {} in {:?}",
                    String::from_utf8_lossy(&out.stdout).trim(),
                    t.elapsed()
                );
                break;
            }
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "containerd's CRI did not answer in 30 s: {}\n{}",
                String::from_utf8_lossy(&out.stderr),
                rt.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        for image in [pause].iter().chain(images) {
            let t = Instant::now();
            check(
                &format!("podman save {image} | ctr images import"),
                StdCommand::new("bash")
                    .arg("-c")
                    .arg(format!(
                        "set -o pipefail; podman save {image} | ctr --address {} -n k8s.io images import -",
                        rt.socket().display()
                    ))
                    .output(),
            );
            eprintln!("containerd: {image} imported in {:?}", t.elapsed());
        }
        rt
    }

    fn log(&self) -> String {
        let mut s = String::new();
        if let Ok(mut f) = std::fs::File::open(self.dir.path().join("containerd.log")) {
            let _ = f.read_to_string(&mut s);
        }
        let lines: Vec<&str> = s.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }

    fn cri_output(&self, args: &[&str]) -> std::process::Output {
        StdCommand::new(venv_python())
            .arg(repo().join("scripts/cri.py"))
            .arg("--endpoint")
            .arg(format!("unix://{}", self.socket().display()))
            .args(args)
            .output()
            .expect("scripts/cri.py")
    }

    /// A CRI call that must succeed; its stdout, trimmed.
    fn cri(&self, args: &[&str]) -> String {
        let out = self.cri_output(args);
        assert!(
            out.status.success(),
            "cri.py {args:?}: {}\n{}\ncontainerd's log:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr),
            self.log()
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// RunPodSandbox of `cfg/pod.json`: the sandbox's id.
    fn run_pod(&mut self, cfg: &Path) -> String {
        let id = self.cri(&["runp", &path(&cfg.join("pod.json"))]);
        self.pods.push(id.clone());
        id
    }

    /// CreateContainer and StartContainer of `cfg/container.json` in `pod`.
    fn start_container(&self, pod: &str, cfg: &Path) -> String {
        let id = self.cri(&[
            "create",
            pod,
            &path(&cfg.join("container.json")),
            &path(&cfg.join("pod.json")),
        ]);
        self.cri(&["start", &id]);
        id
    }

    /// ContainerStatus, verbose: `status` (the CRI's) and `info`
    /// (containerd's: `pid`, `runtimeSpec`).
    fn inspect(&self, id: &str) -> serde_json::Value {
        serde_json::from_str(&self.cri(&["inspect", id])).expect("ContainerStatus JSON")
    }

    /// Poll ContainerStatus until the container has exited (bounded).
    fn wait_exited(&self, id: &str, limit: Duration) -> serde_json::Value {
        let t = Instant::now();
        loop {
            let v = self.inspect(id);
            if v["status"]["state"] == "CONTAINER_EXITED" {
                return v["status"].clone();
            }
            assert!(
                t.elapsed() < limit,
                "{id} still {} after {limit:?}",
                v["status"]["state"]
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Containerd {
    fn drop(&mut self) {
        // The pods through the CRI while containerd runs: their containers
        // stopped, their shims gone, their mounts undone.
        for pod in std::mem::take(&mut self.pods) {
            let _ = self.cri_output(&["stopp", &pod]);
            let _ = self.cri_output(&["rmp", &pod]);
        }
        let pid = nix::unistd::Pid::from_raw(i32::try_from(self.child.id()).expect("pid"));
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let t = Instant::now();
        while matches!(self.child.try_wait(), Ok(None)) && t.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        // What a failed removal left: this runc root's containers, the
        // shims serving this socket, mounts under this directory.
        let root = self.dir.path().join("runc/k8s.io");
        if root.exists() {
            if let Ok(out) = StdCommand::new("runc")
                .arg("--root")
                .arg(&root)
                .args(["list", "-q"])
                .output()
            {
                for id in String::from_utf8_lossy(&out.stdout).split_whitespace() {
                    let _ = StdCommand::new("runc")
                        .arg("--root")
                        .arg(&root)
                        .args(["delete", "--force", id])
                        .output();
                }
            }
        }
        let sock = self.socket().display().to_string();
        if let Ok(procs) = std::fs::read_dir("/proc") {
            for p in procs.flatten() {
                let Ok(n) = p.file_name().to_string_lossy().parse::<i32>() else {
                    continue;
                };
                let cmdline = std::fs::read(p.path().join("cmdline")).unwrap_or_default();
                let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
                if args
                    .first()
                    .is_some_and(|a| a.ends_with(b"containerd-shim-runc-v2"))
                    && args.contains(&sock.as_bytes())
                {
                    let _ = nix::sys::signal::kill(
                        nix::unistd::Pid::from_raw(n),
                        nix::sys::signal::Signal::SIGKILL,
                    );
                }
            }
        }
        let prefix = self.dir.path().display().to_string();
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let mut under: Vec<&str> = mounts
            .lines()
            .filter_map(|l| l.split(' ').nth(4))
            .filter(|m| m.starts_with(&prefix))
            .collect();
        under.sort_unstable_by(|a, b| b.cmp(a));
        for m in under {
            let _ = StdCommand::new("umount").args(["--lazy", m]).output();
        }
    }
}

fn path(p: &Path) -> String {
    p.display().to_string()
}

/// scripts/oci-spec.py --cri of `MANIFEST` into a new directory: pod.json,
/// container.json, kubelet.json; the pod's log directory beside them.
fn cri_configs(sockdir: &Path, state: &Path, image: &str, env: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cmd = oci_spec(MANIFEST, sockdir, state, dir.path());
    cmd.args(["--cri", "--image", image])
        .arg("--log-dir")
        .arg(dir.path().join("pod-logs"));
    for e in env {
        cmd.args(["--env", e]);
    }
    check("oci-spec.py --cri", cmd.output());
    dir
}

fn json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The container's log (the CRI's file, kubelet's format) followed as a
/// daemon's log: every line a ribbridge test waits on.
fn follow(cfg: &Path) -> Daemon {
    let log = cfg.join("pod-logs/ribbridge/0.log");
    let mut cmd = Command::new(venv_python());
    cmd.arg(repo().join("scripts/cri.py"))
        .arg("follow")
        .arg(&log);
    Daemon::spawn_command(NODE, cmd, cfg.join("no-record"), PORT, &[])
}

#[tokio::test]
async fn containerd_cri_static_pod_repair_probes_prestop_and_exit_4_frr_10_7() {
    let t0 = Instant::now();
    let pause = built("build-pause-image.sh", &[]);
    let image = crate::image::image();
    let failpoints = std::env::var("RIBBRIDGE_FAILPOINTS_IMAGE")
        .unwrap_or_else(|_| built("build-image.sh", &["--features", "failpoints"]));
    eprintln!("images ready in {:?}", t0.elapsed());
    let (uid, gid) = (frr_id(FRR, "passwd", "frr"), frr_id(FRR, "group", "frr"));
    // node2 advertises the VIP; node1 will drift.
    let (lab_guard, mut router) = crate::bridge::lab_with_node2(FRR).await;
    let sockdir = lab_guard.sockdir(NODE);
    let state = owned_dir(uid, gid);
    let t = Instant::now();
    let mut rt = Containerd::start(&pause, &[&image, &failpoints]);
    eprintln!("containerd up, images imported in {:?}", t.elapsed());

    // 1. The pod on the host network, the container as the manifest says.
    let cfg = cri_configs(&sockdir, state.path(), &image, &[]);
    let kubelet = json(&cfg.path().join("kubelet.json"));
    // The static pod's container is ribbridge-container-repair.yaml's: the
    // same ContainerConfig but for the pod's seccompProfile.
    let bare = tempfile::tempdir().expect("tempdir");
    let mut cmd = oci_spec(REPAIR, &sockdir, state.path(), bare.path());
    cmd.args(["--cri", "--image", &image])
        .arg("--log-dir")
        .arg(bare.path());
    check("oci-spec.py --cri", cmd.output());
    let (mut ours, mut theirs) = (
        json(&cfg.path().join("container.json")),
        json(&bare.path().join("container.json")),
    );
    for c in [&mut ours, &mut theirs] {
        c["labels"] = serde_json::Value::Null;
        c["linux"]["securityContext"]["seccomp"] = serde_json::Value::Null;
    }
    assert_eq!(ours, theirs, "{MANIFEST}'s container is not {REPAIR}'s");
    let t = Instant::now();
    let pod = rt.run_pod(cfg.path());
    let ctr = rt.start_container(&pod, cfg.path());
    let mut d = follow(cfg.path());
    d.wait_log("zebra: subscribed", Duration::from_secs(30))
        .await;
    eprintln!(
        "containerd: pod and container started, zebra subscribed {:?} after RunPodSandbox",
        t.elapsed()
    );

    // 2. What the runtime made of it, and what the process holds.
    let v = rt.inspect(&ctr);
    assert_eq!(v["status"]["state"], "CONTAINER_RUNNING", "{v}");
    let spec = &v["info"]["runtimeSpec"];
    let seccomp = &spec["linux"]["seccomp"];
    assert_eq!(
        seccomp["defaultAction"], "SCMP_ACT_ERRNO",
        "RuntimeDefault is containerd's filter: {seccomp}"
    );
    let masked: Vec<&str> = spec["linux"]["maskedPaths"]
        .as_array()
        .expect("maskedPaths")
        .iter()
        .filter_map(|p| p.as_str())
        .collect();
    for p in ["/proc/kcore", "/proc/keys", "/sys/firmware"] {
        assert!(masked.contains(&p), "{p} not masked: {masked:?}");
    }
    assert_eq!(spec["root"]["readonly"], true, "read-only root");
    assert_eq!(spec["process"]["noNewPrivileges"], true);
    assert_eq!(spec["process"]["user"]["uid"], 0);
    let bounding: Vec<&str> = spec["process"]["capabilities"]["bounding"]
        .as_array()
        .expect("bounding")
        .iter()
        .filter_map(|c| c.as_str())
        .collect();
    assert_eq!(
        bounding,
        ["CAP_NET_ADMIN", "CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP"],
        "the manifest's four"
    );
    let frr_mount = spec["mounts"]
        .as_array()
        .expect("mounts")
        .iter()
        .find(|m| m["destination"] == "/var/run/frr")
        .unwrap_or_else(|| panic!("no /var/run/frr mount: {}", spec["mounts"]));
    assert_eq!(frr_mount["source"], sockdir.display().to_string());
    assert!(
        frr_mount["options"]
            .as_array()
            .is_some_and(|o| o.iter().any(|x| x == "ro")),
        "frr-sockets read-only: {frr_mount}"
    );
    let pid = v["info"]["pid"].as_u64().expect("pid").to_string();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    assert!(
        status.lines().any(|l| l == "Seccomp:\t2"),
        "the process runs under a seccomp filter"
    );
    // Applied, not only asked: the process's own mount table has the
    // root read-only and a mount over each masked path.
    let mountinfo = std::fs::read_to_string(format!("/proc/{pid}/mountinfo")).expect("mountinfo");
    let mount_opts = |at: &str| {
        mountinfo
            .lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split(' ').collect();
                (f.get(4) == Some(&at)).then(|| f.get(5).copied().unwrap_or("").to_string())
            })
            .next_back()
    };
    let root_opts = mount_opts("/").expect("a root mount");
    assert!(
        root_opts.split(',').any(|o| o == "ro"),
        "root mounted {root_opts}"
    );
    for p in &masked {
        if std::path::Path::new(p).exists() {
            assert!(
                mount_opts(p).is_some(),
                "{p} not masked in the container:\n{mountinfo}"
            );
        }
    }
    let cr = creds_full(&pid);
    eprintln!("containerd: {cr}, seccomp filter, masked {masked:?}");
    expect_creds(&cr, uid, gid, "0000000000001000");

    // 3. The probes, from the node's namespace as kubelet probes a
    // hostNetwork pod; a startup probe allows periodSeconds x
    // failureThreshold.
    for p in kubelet["probes"].as_array().expect("probes") {
        assert_eq!(
            (p["host"].as_str(), p["port"].as_u64()),
            (Some("127.0.0.1"), Some(u64::from(PORT))),
            "{p}"
        );
        let path = p["path"].as_str().expect("path");
        let body = await_code(&mut d, path, 200, Duration::from_secs(30)).await;
        eprintln!("containerd: {} {path}: 200 {:?}", p["probe"], body.trim());
    }

    // 4. Repair: 10.7's kernel_only drift (route then address in one
    // batch, FRRouting/frr#22654) healed from inside: in repair mode the
    // fast path toggles the realm on the trigger, before any drift report
    // (bridge.rs); zebra sometimes wins the race, so it is tried again.
    let (tries, t, line) = crate::support::reproduce(
        &mut d,
        "FRR 10.7 route then address",
        crate::support::ROUTE_THEN_ADDRESS,
        "healing && realm_toggle",
    )
    .await;
    if let Err(e) = router
        .wait_nexthops(vip_addr(), 32, 2, Duration::from_secs(20))
        .await
    {
        panic!("not healed: {e}; log:\n{}", d.drain().join("\n"));
    }
    eprintln!(
        "containerd: kernel_only healed ({tries} tries: {line}), router back to 2 paths {:?} after the batch",
        t.elapsed()
    );
    d.seen_or_wait("VIP consistent && to=advertised", Duration::from_secs(10))
        .await;

    // 5. The preStop hook as kubelet runs it (ExecSync), then the stop.
    let pre: Vec<String> = kubelet["preStop"]
        .as_array()
        .expect("preStop")
        .iter()
        .map(|a| a.as_str().expect("arg").to_string())
        .collect();
    let mut exec = vec!["exec".to_string(), ctr.clone(), "10".into(), "--".into()];
    exec.extend(pre);
    let exec: Vec<&str> = exec.iter().map(String::as_str).collect();
    rt.cri(&exec);
    router
        .wait_nexthops(vip_addr(), 32, 1, Duration::from_secs(15))
        .await
        .expect("the preStop drain took node1's path out");
    let grace = kubelet["terminationGracePeriodSeconds"]
        .as_u64()
        .expect("grace")
        .to_string();
    rt.cri(&["stop", &ctr, &grace]);
    let st = rt.wait_exited(&ctr, Duration::from_secs(15));
    assert_eq!(
        st["exitCode"].as_i64().unwrap_or(0),
        0,
        "SIGTERM: a clean exit: {st}"
    );
    eprintln!(
        "containerd: preStop drained node1; stopped: {} exit 0",
        st["reason"]
    );
    rt.cri(&["rm", &ctr]);
    drop(d);

    // 6. The failpoints build: the kernel watcher ends, the container
    // exits 4, the runtime says so.
    let fp = format!("FAILPOINTS=kernel-watcher-fail=return({POISON})");
    let cfg = cri_configs(&sockdir, state.path(), &failpoints, &[&fp]);
    let ctr = rt.start_container(&pod, cfg.path());
    let mut d = follow(cfg.path());
    d.wait_log("zebra: subscribed", Duration::from_secs(30))
        .await;
    lab(&["vip-add", "node1", POISON]);
    let ended = d
        .wait_log(
            "an essential task ended && kernel watcher && failpoint kernel-watcher-fail",
            Duration::from_secs(15),
        )
        .await;
    let st = rt.wait_exited(&ctr, Duration::from_secs(30));
    assert_eq!(st["exitCode"].as_i64(), Some(4), "exit code 4: {st}");
    assert_eq!(st["reason"], "Error", "{st}");
    eprintln!(
        "containerd: {ended}; ContainerStatus exitCode 4, reason {}",
        st["reason"]
    );
    lab(&["vip-del", "node1", POISON]);
    drop(d);
    drop(rt);
    drop(lab_guard);
}
