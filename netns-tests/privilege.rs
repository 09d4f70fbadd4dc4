//! Least privilege: ribbridge runs unchanged as a non-root user
//! in FRR's groups when it does not heal kernel routes; healing kernel
//! routes needs CAP_NET_ADMIN and nothing else; its HTTP endpoint refuses
//! every method but GET and HEAD.
//!
//! The user is FRR's own `frr` user with FRR's groups (`frr`, `frrvty`) as
//! the FRR root numbers them, started with `setpriv`: no capabilities, no
//! way to gain any (`--no-new-privs`). Group membership alone is not
//! enough: zebra creates zserv.api as `srwx------ frr:frr` (measured on
//! 8.4, 10.3, 10.7), so only the frr user (or root) can connect; the vty
//! sockets are `srwxrwx--- frr:frrvty`.

use std::time::Duration;

use ribbridge::reconcile::Class;

use crate::support::daemon::Daemon;
use crate::support::{Lab, lab};

const VIP: &str = "192.0.2.10/32";
const NODE: &str = "rb-node1";
/// The id of `name` in `/etc/{file}` of the FRR root of `frr` (the
/// sockets' owner and group).
pub(crate) fn frr_id(frr: &str, file: &str, name: &str) -> u32 {
    let group = match frr {
        "8.4" => format!("/etc/{file}"),
        v => format!("/var/cache/ribbridge/frr-{v}/etc/{file}"),
    };
    let text = std::fs::read_to_string(&group).unwrap_or_else(|e| panic!("{group}: {e}"));
    text.lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            (f.first() == Some(&name)).then(|| f.get(2).and_then(|g| g.parse().ok()))?
        })
        .unwrap_or_else(|| panic!("no {name} in {group}: is FRR installed?"))
}

/// `setpriv` arguments: the frr user, FRR's groups, `caps` (e.g.
/// "+net_admin") kept as ambient capabilities, nothing else.
fn as_frr(frr: &str, caps: &str) -> Vec<String> {
    let (uid, gid) = (frr_id(frr, "passwd", "frr"), frr_id(frr, "group", "frr"));
    let groups = format!("--groups={gid},{}", frr_id(frr, "group", "frrvty"));
    let mut v = vec![
        "setpriv".to_string(),
        format!("--reuid={uid}"),
        format!("--regid={gid}"),
        groups,
        "--no-new-privs".into(),
    ];
    if caps.is_empty() {
        v.extend(["--inh-caps=-all".into(), "--bounding-set=-all".into()]);
    } else {
        v.extend([
            format!("--inh-caps=-all,{caps}"),
            format!("--ambient-caps=-all,{caps}"),
            format!("--bounding-set=-all,{caps}"),
        ]);
    }
    v
}

/// (uid, effective capabilities) of a process, from /proc.
fn creds(d: &Daemon) -> (String, String) {
    super::support::creds_of(&d.pid().to_string())
}

/// Observe mode as the frr user in FRR's groups, with no capability at all: it
/// subscribes to zebra, reads bgpd, mirrors the kernel, classifies a
/// drift. The HTTP endpoint refuses POST, PUT and DELETE with 405.
async fn observe_as_frr(frr: &'static str) {
    let lab_guard = Lab::up(frr, 2, &[VIP]);
    let wrapper = as_frr(frr, "");
    let wrapper: Vec<&str> = wrapper.iter().map(String::as_str).collect();
    let mut d = Daemon::spawn_wrapped(
        NODE,
        &lab_guard.sockdir(NODE),
        &["--mode", "observe"],
        &wrapper,
    );
    d.wait_log("zebra: subscribed", Duration::from_secs(15))
        .await;
    let (uid, cap) = creds(&d);
    assert!(
        uid == frr_id(frr, "passwd", "frr").to_string() && cap == "0000000000000000",
        "uid {uid}, CapEff {cap}"
    );
    lab(&["vip-add", "node1", VIP]);
    lab(&["vip-add", "node2", VIP]);
    // 8.4 sometimes loses a fresh import by itself (seen in this test):
    // that is already the drift to classify.
    let first = d.wait_log("table=198 from=", Duration::from_secs(15)).await;
    // A drift this release produces, classified without privilege.
    let class = if frr == "8.4" {
        if first.contains("to=advertised") {
            lab(&["vip-reassert", "node1", VIP]);
        }
        Class::NotRedistributed
    } else {
        assert!(first.contains("to=advertised"), "{first}");
        lab(&["vip-del", "node1", VIP]);
        d.wait_log("VIP consistent && to=withdrawn", Duration::from_secs(5))
            .await;
        lab(&["exec", NODE, "sh", "-c", crate::support::ROUTE_THEN_ADDRESS]);
        Class::KernelOnly
    };
    if !first.contains(&format!("to={}", class.name())) {
        d.wait_log(
            &format!("VIP drift && to={}", class.name()),
            Duration::from_secs(10),
        )
        .await;
    }
    let (doc, code) = d.status().await;
    let v = crate::support::vip_of(&doc, VIP);
    assert_eq!((v.state.class(), code), (Some(class), 1));
    assert_eq!(v.heal.last_result.as_deref(), Some("observe_only"));
    let m = d.metrics().await;
    assert!(m.contains("ribbridge_zapi_connected 1"), "{m}");
    for method in ["POST", "PUT", "DELETE"] {
        let r = d
            .http(&format!(
                "{method} /status HTTP/1.1\\r\\nContent-Length: 0\\r\\n\\r\\n"
            ))
            .await;
        assert!(r.starts_with("HTTP/1.1 405"), "{method}: {r}");
        assert!(
            r.contains("Allow: GET, HEAD") || r.contains("allow: GET, HEAD"),
            "{method}: {r}"
        );
    }
    let (_, _, log) = d.stop().await;
    assert!(
        !log.iter().any(|l| l.contains("healing")),
        "observe mode acted"
    );
    eprintln!(
        "FRR {frr}: observe mode as user frr in groups frr+frrvty with no capability: subscribed, classified {class}; POST/PUT/DELETE -> 405"
    );
    drop(lab_guard);
}

#[tokio::test]
async fn privilege_observe_as_frr_user_frr_8_4() {
    observe_as_frr("8.4").await;
}

#[tokio::test]
async fn privilege_observe_as_frr_user_frr_10_7() {
    observe_as_frr("10.7").await;
}

/// Repair mode's kernel write (10.7's realm-toggling replace) as frr:
/// without CAP_NET_ADMIN it fails with EPERM, logged and counted, and the
/// VIP stays a drift; with CAP_NET_ADMIN alone it heals.
#[tokio::test]
async fn privilege_kernel_heal_needs_cap_net_admin_and_nothing_else() {
    let frr = "10.7";
    let lab_guard = Lab::up(frr, 2, &[VIP]);
    lab(&["vip-add", "node2", VIP]);
    let none = as_frr(frr, "");
    let none: Vec<&str> = none.iter().map(String::as_str).collect();
    let mut d = Daemon::spawn_wrapped(NODE, &lab_guard.sockdir(NODE), &[], &none);
    d.wait_log("zebra: subscribed", Duration::from_secs(15))
        .await;
    lab(&["exec", NODE, "sh", "-c", crate::support::ROUTE_THEN_ADDRESS]);
    let line = d
        .wait_log("heal action failed", Duration::from_secs(10))
        .await;
    assert!(
        line.contains("Operation not permitted")
            || line.contains("EPERM")
            || line.contains("permission"),
        "{line}"
    );
    // The refused heal may be the fast one, before the drift is reported.
    d.seen_or_wait("VIP drift && to=kernel_only", Duration::from_secs(10))
        .await;
    let (doc, _) = d.status().await;
    let v = crate::support::vip_of(&doc, VIP);
    assert_eq!(v.state.class(), Some(Class::KernelOnly));
    eprintln!("without CAP_NET_ADMIN: {line}");
    d.stop().await;

    let admin = as_frr(frr, "+net_admin");
    let admin: Vec<&str> = admin.iter().map(String::as_str).collect();
    let mut d = Daemon::spawn_wrapped(NODE, &lab_guard.sockdir(NODE), &[], &admin);
    d.wait_log("zebra: subscribed", Duration::from_secs(15))
        .await;
    let (uid, cap) = creds(&d);
    assert_eq!(
        (uid.as_str(), cap.as_str()),
        (
            frr_id(frr, "passwd", "frr").to_string().as_str(),
            "0000000000001000"
        ),
        "the frr user with CAP_NET_ADMIN (bit 12) only"
    );
    d.wait_log("VIP consistent && to=advertised", Duration::from_secs(15))
        .await;
    let (_, _, log) = d.stop().await;
    assert!(
        !log.iter().any(|l| l.contains("heal action failed")),
        "{log:?}"
    );
    eprintln!("as user frr with CAP_NET_ADMIN only: kernel_only healed");
    drop(lab_guard);
}

/// The wrong user says whose socket refused it and what to set: started
/// as root with `--user 65534:65534` (nobody, not FRR's user), the daemon
/// becomes nobody, FRR's sockets refuse it, and the reason (socket, owner,
/// mode, the process's ids, the manifest field) is in the log and in
/// `ribbridge status`, which exits 2.
#[tokio::test]
async fn privilege_wrong_user_names_the_socket_owner_mode_and_the_field_to_set() {
    let frr = "10.7";
    let lab_guard = Lab::up(frr, 2, &[VIP]);
    // zebra.vty refuses first (the release is read before zserv.api is
    // dialled): FRR's user, the frrvty group.
    let (uid, gid) = (frr_id(frr, "passwd", "frr"), frr_id(frr, "group", "frrvty"));
    let mut d = Daemon::spawn(
        NODE,
        &lab_guard.sockdir(NODE),
        &["--mode", "observe", "--user", "65534:65534"],
    );
    let line = d
        .wait_log(
            "zebra not connected && owned by uid",
            Duration::from_secs(15),
        )
        .await;
    let c = crate::support::creds_full(&d.pid().to_string());
    assert_eq!(
        (c.uid.as_str(), c.gid.as_str(), c.eff.as_str()),
        ("65534", "65534", "0000000000000000"),
        "{c}"
    );
    let out = std::process::Command::new("ip")
        .args(["netns", "exec", NODE])
        .arg(env!("CARGO_BIN_EXE_ribbridge"))
        .args(["status", "--endpoint", &format!("127.0.0.1:{}", d.port)])
        .output()
        .expect("ribbridge status");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "status: {stderr}");
    for want in [
        format!("{}/zebra.vty", lab_guard.sockdir(NODE).display()),
        format!("owned by uid {uid} gid {gid}"),
        "with mode 07".to_string(),
        "ribbridge runs as uid 65534 gid 65534 groups [65534]".to_string(),
        "runAsUser and runAsGroup".to_string(),
        format!("--user {uid}:{gid}"),
        "User= and Group=".to_string(),
    ] {
        assert!(
            stderr.contains(&want),
            "{want:?} not in status' reason: {stderr}"
        );
    }
    eprintln!("wrong user: log: {line}\nstatus (exit 2): {stderr}");
    d.stop().await;
    drop(lab_guard);
}

/// `--user` under a runtime's rules (uid 0, the bounding set the
/// manifest's capabilities.add, no_new_privs; as `runc` starts a CRI-O
/// container): without SETPCAP the start fails, naming it and the
/// manifest field; with it, the process ends as the user with
/// CAP_NET_ADMIN alone in every set. No lab: nothing is read.
#[tokio::test]
async fn privilege_user_switch_needs_its_capabilities_and_keeps_net_admin_alone() {
    let run = |bounding: &str| {
        std::process::Command::new("setpriv")
            .args(["--no-new-privs", "--inh-caps=-all"])
            .arg(format!("--bounding-set=-all,{bounding}"))
            .arg(env!("CARGO_BIN_EXE_ribbridge"))
            .args(["run", "--user", "4242:4242", "--mode", "repair"])
            .args(["--frr-dir", "/nonexistent", "--listen", "127.0.0.1:1"])
            .output()
            .expect("setpriv ribbridge")
    };
    let out = run("+net_admin,+setuid,+setgid");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--user 4242:4242: the process lacks SETPCAP")
            && stderr.contains("securityContext.capabilities.add"),
        "{stderr}"
    );
    eprintln!("without SETPCAP: {stderr}");
    // Port 1 is refused to a process without CAP_NET_BIND_SERVICE: the
    // daemon gets that far as the user, and says so.
    let out = run("+net_admin,+setuid,+setgid,+setpcap");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "privileges set privileges=uid 4242 gid 4242 groups [4242] effective NET_ADMIN permitted NET_ADMIN \
             bounding NET_ADMIN inheritable none ambient none no_new_privs 1"
        ) && stderr.contains("cannot listen on 127.0.0.1:1: permission denied"),
        "{stderr}"
    );
}
