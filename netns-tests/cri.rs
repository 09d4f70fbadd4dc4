//! The shipped manifests launched the way a Kubernetes node launches them,
//! not the way podman does: scripts/oci-spec.py turns the container of a
//! manifest (its securityContext, args, resources, volumeMounts and
//! lifecycle.preStop) into the OCI runtime spec CRI-O would hand to its
//! runtime, and Debian's `runc` starts it in rb-node1's network namespace
//! (the node's, as with hostNetwork) beside FRR 10.7, with the lab's FRR
//! socket directory as the `frr-sockets` volume. Under those rules a
//! capability added to a non-root container is cleared at exec, which is
//! why the repair manifests start as root and pass `--user`.
//!
//! - the four repair manifests carry one container: their specs' process,
//!   mounts and resources are equal;
//! - observe (deploy/openshift/ribbridge-container.yaml): classifies the VIP
//!   advertised, as FRR's user holding no capability;
//! - repair without NET_ADMIN in the spec: 10.7's `kernel_only` drift is
//!   not healed, the refusal is in /status, the kernel route and the
//!   router's single path stay as they were;
//! - repair (deploy/openshift/ribbridge-container-repair.yaml): healed from
//!   inside, router back to 2 paths; the process is FRR's user with
//!   CAP_NET_ADMIN alone in the permitted, effective and bounding sets,
//!   nothing inheritable or ambient, no_new_privs set; then the preStop
//!   drain, run as the runtime runs it (`runc exec` with the container's
//!   user and capabilities), takes node1's path out of the router.
//!
//! FRR's ids in the lab are not the upstream image's 100:101: the script
//! replaces those ids, and only those (`--frr-ids`), as an operator would.

use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;
use std::time::{Duration, Instant};

use ribbridge::reconcile::Class;
use tokio::process::Command;

use crate::privilege::frr_id;
use crate::support::daemon::Daemon;
use crate::support::{Creds, Lab, RouteWatch, creds_full, lab, owned_dir, repo, venv_python};

const FRR: &str = "10.7";
const VIP: &str = "192.0.2.10/32";
const NODE: &str = "rb-node1";
const NAME: &str = "rb-cri-test";
/// The manifests' listen port.
const PORT: u16 = 7585;
/// runc's state directory for this test alone (podman's stays apart).
const RUNC_ROOT: &str = "/run/ribbridge-cri-runc";
const OBSERVE: &str = "deploy/openshift/ribbridge-container.yaml";
const REPAIR: &str = "deploy/openshift/ribbridge-container-repair.yaml";
/// Every other manifest that carries the repair container.
const REPAIR_TOO: [&str; 3] = [
    "deploy/openshift/0005-ribbridge-repair.yaml",
    "deploy/kubernetes/frr-k8s-daemonset-patch-repair.yaml",
    "deploy/kubernetes/metallb-speaker-patch-repair.yaml",
];
fn vip_addr() -> std::net::IpAddr {
    "192.0.2.10".parse().expect("address")
}

fn runc() -> StdCommand {
    let mut c = StdCommand::new("runc");
    c.args(["--root", RUNC_ROOT]);
    c
}

pub(crate) fn check(what: &str, out: std::io::Result<std::process::Output>) -> String {
    let out = out.unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The image unpacked: its root filesystem and its configuration, as a
/// runtime's image store holds them.
struct Unpacked {
    _dir: tempfile::TempDir,
    rootfs: PathBuf,
    config: PathBuf,
}

fn unpack(image: &str) -> Unpacked {
    let dir = tempfile::tempdir().expect("tempdir");
    let rootfs = dir.path().join("rootfs");
    std::fs::create_dir(&rootfs).expect("rootfs");
    let config = dir.path().join("image.json");
    let json = check(
        "podman image inspect",
        StdCommand::new("podman")
            .args(["image", "inspect", image])
            .output(),
    );
    std::fs::write(&config, json).expect("image.json");
    let ctr = format!("{NAME}-unpack");
    let _ = StdCommand::new("podman")
        .args(["rm", "--force", "--ignore", &ctr])
        .output();
    check(
        "podman create",
        StdCommand::new("podman")
            .args(["--runtime", "runc", "create", "--name", &ctr, image])
            .output(),
    );
    check(
        "podman export | tar -x",
        StdCommand::new("sh")
            .arg("-c")
            .arg(format!(
                "podman export {ctr} | tar -C {} -x",
                rootfs.display()
            ))
            .output(),
    );
    check(
        "podman rm",
        StdCommand::new("podman").args(["rm", &ctr]).output(),
    );
    Unpacked {
        _dir: dir,
        rootfs,
        config,
    }
}

/// A bundle made by scripts/oci-spec.py from `manifest`.
struct Bundle {
    dir: tempfile::TempDir,
}

impl Bundle {
    fn config(&self) -> serde_json::Value {
        let text =
            std::fs::read_to_string(self.dir.path().join("config.json")).expect("config.json");
        serde_json::from_str(&text).expect("config.json is JSON")
    }
    fn prestop(&self) -> PathBuf {
        self.dir.path().join("prestop.json")
    }
}

/// scripts/oci-spec.py for `manifest` into `out`, run by the venv's python:
/// the lab's FRR socket directory as `frr-sockets`, `state` as
/// `ribbridge-state`, FRR 10.7's ids for the image's 100:101.
pub(crate) fn oci_spec(manifest: &str, sockdir: &Path, state: &Path, out: &Path) -> StdCommand {
    let ids = format!(
        "{}:{}",
        frr_id(FRR, "passwd", "frr"),
        frr_id(FRR, "group", "frr")
    );
    let mut cmd = StdCommand::new(venv_python());
    cmd.arg(repo().join("scripts/oci-spec.py"))
        .arg("--manifest")
        .arg(repo().join(manifest))
        .arg("--volume")
        .arg(format!("frr-sockets={}", sockdir.display()))
        .arg("--volume")
        .arg(format!("ribbridge-state={}", state.display()))
        .args(["--frr-ids", &ids])
        .arg("--out")
        .arg(out);
    cmd
}

fn bundle(
    image: &Unpacked,
    manifest: &str,
    sockdir: &Path,
    state: &Path,
    without: &[&str],
) -> Bundle {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cmd = oci_spec(manifest, sockdir, state, dir.path());
    cmd.arg("--image-config")
        .arg(&image.config)
        .arg("--rootfs")
        .arg(&image.rootfs)
        .args(["--netns", &format!("/run/netns/{NODE}")]);
    for c in without {
        cmd.args(["--without-cap", c]);
    }
    let out = cmd.output().expect("scripts/oci-spec.py");
    assert!(
        out.status.success(),
        "oci-spec.py {manifest}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!(
        "{manifest}{}: {}",
        if without.is_empty() {
            String::new()
        } else {
            format!(" without {without:?}")
        },
        String::from_utf8_lossy(&out.stderr).trim()
    );
    Bundle { dir }
}

/// Deletes the container when dropped (also when a test panics).
struct Container;

impl Container {
    fn remove() {
        let _ = runc().args(["delete", "--force", NAME]).output();
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        Container::remove();
    }
}

/// `runc run` of `b` in the foreground: its stdio is the container's.
fn start(b: &Bundle, args: &[&str]) -> (Daemon, Container) {
    Container::remove();
    let mut cmd = Command::new("runc");
    cmd.args(["--root", RUNC_ROOT, "run", "--bundle"])
        .arg(b.dir.path())
        .arg(NAME);
    // The manifests record nothing: the fixture's record path stays empty.
    let record = b.dir.path().join("events.jsonl");
    (
        Daemon::spawn_command(NODE, cmd, record, PORT, args),
        Container,
    )
}

/// The container's process's credentials.
fn creds() -> Creds {
    let state = check("runc state", runc().args(["state", NAME]).output());
    let v: serde_json::Value = serde_json::from_str(&state).expect("runc state JSON");
    let pid = v["pid"].as_u64().expect("pid in runc state");
    creds_full(&pid.to_string())
}

pub(crate) fn expect_creds(c: &Creds, uid: u32, gid: u32, caps: &str) {
    let want = Creds {
        uid: uid.to_string(),
        gid: gid.to_string(),
        groups: gid.to_string(),
        inh: "0000000000000000".into(),
        prm: caps.into(),
        eff: caps.into(),
        bnd: caps.into(),
        amb: "0000000000000000".into(),
        no_new_privs: "1".into(),
    };
    assert_eq!(c, &want, "got {c}, want {want}");
}

/// The node's table-198 route to the VIP, as `ip route` prints it.
fn node_route() -> String {
    lab(&["exec", NODE, "ip", "route", "show", "table", "198", VIP])
        .trim()
        .to_string()
}

#[tokio::test]
async fn cri_manifests_under_runc_observe_repair_without_and_with_net_admin_frr_10_7() {
    let t0 = Instant::now();
    let image = unpack(&crate::image::image());
    eprintln!("image unpacked in {:?}", t0.elapsed());
    let (uid, gid) = (frr_id(FRR, "passwd", "frr"), frr_id(FRR, "group", "frr"));
    let lab_guard = Lab::up(FRR, 2, &[VIP]);
    let sockdir = lab_guard.sockdir(NODE);
    // The hostPath /run/ribbridge, made for FRR's user as the tmpfiles
    // entry makes it on a node.
    let state = owned_dir(uid, gid);

    // 0. One container in every repair manifest.
    let repair = bundle(&image, REPAIR, &sockdir, state.path(), &[]);
    let c = repair.config();
    for m in REPAIR_TOO {
        let other = bundle(&image, m, &sockdir, state.path(), &[]).config();
        for key in ["process", "mounts", "root"] {
            assert_eq!(other[key], c[key], "{m}'s {key} differs from {REPAIR}'s");
        }
        assert_eq!(
            other["linux"]["resources"], c["linux"]["resources"],
            "{m}'s resources differ from {REPAIR}'s"
        );
    }
    let user = &c["process"]["user"];
    assert_eq!(
        (user["uid"].as_u64(), user["gid"].as_u64()),
        (Some(0), Some(0))
    );
    assert_eq!(c["process"]["noNewPrivileges"], true);
    assert_eq!(c["root"]["readonly"], true);

    let mut router = RouteWatch::open("rb-router");
    crate::support::vip_with_address_on_node1(&mut router, VIP).await;

    // 1. Observe: advertised, as FRR's user with nothing.
    let observe = bundle(&image, OBSERVE, &sockdir, state.path(), &[]);
    let t = Instant::now();
    let (mut d, container) = start(&observe, &["--mode", "observe"]);
    d.wait_log("VIP consistent && to=advertised", Duration::from_secs(30))
        .await;
    eprintln!("observe: advertised {:?} after runc run", t.elapsed());
    let cr = creds();
    eprintln!("observe under runc: {cr}");
    expect_creds(&cr, uid, gid, "0000000000000000");
    let (doc, code) = d.status().await;
    assert_eq!(
        (crate::support::vip_of(&doc, VIP).state.class(), code),
        (Some(Class::Advertised), 0)
    );
    d.stop().await;
    drop(container);

    // 2. Repair without NET_ADMIN in the spec: refused, reported, nothing
    // else happens.
    lab(&["vip-del", "node1", VIP, "--with-address"]);
    router
        .wait_nexthops(vip_addr(), 32, 1, Duration::from_secs(15))
        .await
        .expect("node2's path only");
    let bare = bundle(&image, REPAIR, &sockdir, state.path(), &["NET_ADMIN"]);
    let (mut d, container) = start(&bare, &["--mode", "repair"]);
    d.wait_log(
        "repair mode without CAP_NET_ADMIN && securityContext.capabilities.add",
        Duration::from_secs(30),
    )
    .await;
    d.wait_log("zebra: subscribed", Duration::from_secs(30))
        .await;
    let cr = creds();
    eprintln!("repair without NET_ADMIN under runc: {cr}");
    expect_creds(&cr, uid, gid, "0000000000000000");
    let line = crate::support::kernel_only_unhealed(&mut d).await;
    d.seen_or_wait("VIP drift && to=kernel_only", Duration::from_secs(10))
        .await;
    let mark = d.drain().len();
    let before = node_route();
    assert!(
        line.contains("Operation not permitted") || line.contains("EPERM"),
        "{line}"
    );
    let (doc, code) = d.status().await;
    let v = crate::support::vip_of(&doc, VIP);
    assert_eq!((v.state.class(), code), (Some(Class::KernelOnly), 1));
    let result = v.heal.last_result.clone().unwrap_or_default();
    assert!(
        result.starts_with("error:") || result == "gave_up",
        "heal result {result:?}"
    );
    eprintln!("without NET_ADMIN: {line}; /status heal result {result:?}");
    assert_eq!(node_route(), before, "the kernel route changed");
    assert_eq!(
        router.nexthops(vip_addr(), 32).await,
        1,
        "the router's paths changed"
    );
    let (_, _, log) = d.stop().await;
    assert!(
        !log[mark..].iter().any(|l| l.contains("VIP consistent")),
        "a heal without NET_ADMIN succeeded? {log:?}"
    );
    drop(container);

    // 3. Repair as shipped: healed from inside, NET_ADMIN alone.
    let t = Instant::now();
    let (mut d, container) = start(&repair, &["--mode", "repair"]);
    if let Err(e) = router
        .wait_nexthops(vip_addr(), 32, 2, Duration::from_secs(20))
        .await
    {
        panic!("not healed: {e}; log:\n{}", d.drain().join("\n"));
    }
    eprintln!(
        "repair under runc: healed, router back to 2 paths {:?} after runc run",
        t.elapsed()
    );
    let cr = creds();
    eprintln!("repair under runc: {cr}");
    expect_creds(&cr, uid, gid, "0000000000001000");
    d.wait_log("VIP consistent && to=advertised", Duration::from_secs(10))
        .await;
    let m = d.metrics().await;
    assert!(
        m.contains("ribbridge_heal_actions_total{"),
        "heal not counted:\n{m}"
    );

    // 4. The preStop hook as the runtime runs it: the container's user
    // (root) and capabilities; the drain becomes FRR's user itself.
    let t = Instant::now();
    let out = runc()
        .args(["exec", "--process"])
        .arg(repair.prestop())
        .arg(NAME)
        .output()
        .expect("runc exec preStop");
    assert!(
        out.status.success(),
        "preStop drain: {}\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    router
        .wait_nexthops(vip_addr(), 32, 1, Duration::from_secs(15))
        .await
        .expect("the preStop drain took node1's path out");
    eprintln!(
        "preStop drain under runc exec: exit 0, router at 1 path {:?} after it started",
        t.elapsed()
    );
    d.stop().await;
    drop(container);
    drop(lab_guard);
}
