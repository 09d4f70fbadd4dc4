//! The process's privileges: who ribbridge runs as and which capabilities
//! it holds, set once at start-up, before any thread is spawned and before
//! any input is read.
//!
//! Contract:
//! - [`enter`] is the first thing a daemon or a drain does. With a target
//!   ([`Ids`], `--user UID:GID`) it must run as uid 0 holding CAP_SETUID,
//!   CAP_SETGID and CAP_SETPCAP: it cuts the bounding set to CAP_NET_ADMIN,
//!   keeps its permitted set across the switch (`PR_SET_KEEPCAPS`), becomes
//!   UID:GID (real, effective and saved ids; the supplementary groups are
//!   GID alone) and keeps at most CAP_NET_ADMIN in every set. That is how a
//!   container runtime (CRI-O, containerd: no ambient capabilities in
//!   Kubernetes) can start a non-root process that holds CAP_NET_ADMIN: a
//!   runtime that starts the process as UID itself clears its capabilities
//!   at exec. Without a target, a non-root process only narrows what its
//!   launcher gave it (podman's and systemd's ambient capabilities) to at
//!   most CAP_NET_ADMIN; root without a target is left as it is (root needs
//!   its capabilities to reach FRR's sockets) and says so.
//! - [`narrow`] then keeps exactly what the mode needs ([`Need`]): repair
//!   CAP_NET_ADMIN (if the launcher gave it; if not, every kernel heal is
//!   refused and [`Held::missing`] says so), observe and the drain nothing;
//!   it sets `no_new_privs` (ribbridge gains nothing by exec). Neither call
//!   does anything to a root process without a target.
//! - Both read the result back and fail ([`PrivilegeError::Kept`]) rather
//!   than run with more than they meant to keep.
//!
//! Capabilities are per thread: the calls act on the calling thread, so
//! they must run while the process has one; every thread spawned later
//! inherits the result.

use std::fmt;
use std::str::FromStr;

use caps::{CapSet, Capability, CapsHashSet};
use nix::unistd::{Gid, Uid};

/// The one capability ribbridge ever keeps: kernel route and address
/// writes (heals), and a netlink receive buffer above the system limit.
pub const CEILING: Capability = Capability::CAP_NET_ADMIN;

/// The capabilities `--user` needs at start-up (then dropped): the id
/// switch and the bounding set's cut.
const TO_SWITCH: [Capability; 3] = [
    Capability::CAP_SETUID,
    Capability::CAP_SETGID,
    Capability::CAP_SETPCAP,
];

/// The user and group to become (`--user UID:GID`): FRR's, the owner of
/// zserv.api.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ids {
    /// The user id.
    pub uid: u32,
    /// The group id, also the only supplementary group.
    pub gid: u32,
}

impl fmt::Display for Ids {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.uid, self.gid)
    }
}

/// Why `--user` text is not a [`Ids`].
#[derive(Debug, thiserror::Error)]
#[error(
    "'{text}' is not UID:GID ({why}); write numbers, e.g. 100:101 (FRR's user and group: `stat -c '%u:%g' zserv.api` in FRR's socket directory)"
)]
pub struct IdsError {
    text: String,
    why: &'static str,
}

impl FromStr for Ids {
    type Err = IdsError;
    fn from_str(s: &str) -> Result<Self, IdsError> {
        let err = |why| IdsError {
            text: s.to_string(),
            why,
        };
        let (u, g) = s.split_once(':').ok_or_else(|| err("no ':'"))?;
        let uid: u32 = u.parse().map_err(|_| err("the uid is not a number"))?;
        let gid: u32 = g.parse().map_err(|_| err("the gid is not a number"))?;
        if uid == 0 || gid == 0 {
            return Err(err("0 would keep root's ids"));
        }
        Ok(Ids { uid, gid })
    }
}

/// What a mode needs to hold once started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Nothing: observe mode, the router and BMP vantages, drain, undrain.
    Nothing,
    /// CAP_NET_ADMIN: repair mode's kernel writes.
    NetAdmin,
}

/// Why the privileges could not be set as asked.
#[derive(Debug, thiserror::Error)]
pub enum PrivilegeError {
    /// `--user` given to a process that is not root.
    #[error(
        "--user {ids}: ribbridge runs as uid {uid}, and only root can become another user: start it as uid 0 \
         (Kubernetes: securityContext.runAsUser: 0 with SETUID, SETGID and SETPCAP beside NET_ADMIN in \
         capabilities.add), or as {ids} itself and without --user"
    )]
    NotRoot {
        /// The target.
        ids: Ids,
        /// Who the process is.
        uid: u32,
    },
    /// `--user` given to a root process without what the switch needs.
    #[error(
        "--user {ids}: the process lacks {missing} (it holds {held}): add {missing} to the container's \
         securityContext.capabilities.add (they are dropped at start-up)"
    )]
    Missing {
        /// The target.
        ids: Ids,
        /// The capabilities lacking, as the manifest names them.
        missing: String,
        /// The permitted set, as the manifest names them.
        held: String,
    },
    /// A system call refused.
    #[error("{what}: {source}")]
    Call {
        /// The call and its argument.
        what: String,
        /// The kernel's answer.
        #[source]
        source: CallError,
    },
    /// Read back, the process holds more than it meant to keep.
    #[error(
        "after start-up the process still holds {what}: refusing to run with more than it needs"
    )]
    Kept {
        /// What is left over.
        what: String,
    },
}

/// A refused call: the id calls' errno or the capability crate's message.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// setresuid, setgroups, prctl...
    #[error(transparent)]
    Errno(#[from] nix::Error),
    /// capget, capset, PR_CAPBSET_DROP, the ambient set.
    #[error(transparent)]
    Caps(#[from] caps::errors::CapsError),
}

fn call<T, E: Into<CallError>>(
    what: impl Into<String>,
    r: Result<T, E>,
) -> Result<T, PrivilegeError> {
    r.map_err(|e| PrivilegeError::Call {
        what: what.into(),
        source: e.into(),
    })
}

/// What the process holds, read back from the kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    /// Real, effective and saved uid, when all three agree (else the effective).
    pub uid: u32,
    /// Effective gid.
    pub gid: u32,
    /// Supplementary groups.
    pub groups: Vec<u32>,
    /// The effective set.
    pub effective: CapsHashSet,
    /// The permitted set.
    pub permitted: CapsHashSet,
    /// The bounding set.
    pub bounding: CapsHashSet,
    /// The inheritable set.
    pub inheritable: CapsHashSet,
    /// The ambient set.
    pub ambient: CapsHashSet,
    /// `no_new_privs`.
    pub no_new_privs: bool,
    /// Root without `--user`: left as it was.
    pub untouched_root: bool,
    /// What the mode needs and the launcher did not give (repair without
    /// CAP_NET_ADMIN): every kernel heal will be refused.
    pub missing: Option<Capability>,
}

impl Held {
    /// The current thread's credentials.
    pub fn read() -> Result<Held, PrivilegeError> {
        let ids = call("getresuid", nix::unistd::getresuid())?;
        let set = |s: CapSet| call(format!("capget {s:?}"), caps::read(None, s));
        Ok(Held {
            uid: ids.effective.as_raw(),
            gid: Gid::effective().as_raw(),
            groups: call("getgroups", nix::unistd::getgroups())?
                .into_iter()
                .map(Gid::as_raw)
                .collect(),
            effective: set(CapSet::Effective)?,
            permitted: set(CapSet::Permitted)?,
            bounding: set(CapSet::Bounding)?,
            inheritable: set(CapSet::Inheritable)?,
            ambient: set(CapSet::Ambient)?,
            no_new_privs: call("PR_GET_NO_NEW_PRIVS", nix::sys::prctl::get_no_new_privs())?,
            untouched_root: false,
            missing: None,
        })
    }
}

/// Capability names as a manifest writes them (`NET_ADMIN`), sorted;
/// `all` for the full set, `none` for the empty one.
pub fn names(set: &CapsHashSet) -> String {
    if set.is_empty() {
        return "none".into();
    }
    if caps::all().is_subset(set) {
        return "all".into();
    }
    if set.len() > 8 {
        // Root's sets: the names would fill the line and say nothing.
        return format!("{} capabilities", set.len());
    }
    let mut v: Vec<String> = set
        .iter()
        .map(|c| c.to_string().trim_start_matches("CAP_").to_string())
        .collect();
    v.sort();
    v.join(",")
}

impl fmt::Display for Held {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "uid {} gid {} groups {:?} effective {} permitted {} bounding {} inheritable {} ambient {} no_new_privs {}",
            self.uid,
            self.gid,
            self.groups,
            names(&self.effective),
            names(&self.permitted),
            names(&self.bounding),
            names(&self.inheritable),
            names(&self.ambient),
            u8::from(self.no_new_privs)
        )
    }
}

/// Start-up, before any input: become `user` if given (see the module
/// doc), and hold at most [`CEILING`] (and CAP_SETPCAP, for [`narrow`]'s
/// cut of the bounding set, if the launcher gave it).
pub fn enter(user: Option<Ids>) -> Result<Held, PrivilegeError> {
    let now = Held::read()?;
    let ids = call("getresuid", nix::unistd::getresuid())?;
    let is_root = ids.real.is_root() || ids.effective.is_root();
    let ceiling: CapsHashSet = [CEILING, Capability::CAP_SETPCAP].into();
    if is_root {
        return match user {
            None => Ok(Held {
                untouched_root: true,
                ..now
            }),
            Some(ids) => switch(ids, &now, &ceiling),
        };
    }
    match user {
        Some(ids) if (ids.uid, ids.gid) != (now.uid, now.gid) => {
            Err(PrivilegeError::NotRoot { ids, uid: now.uid })
        }
        _ => keep_at_most(&now.permitted, &ceiling),
    }
}

/// Root to `ids`, keeping `ceiling` of what is held.
fn switch(ids: Ids, now: &Held, ceiling: &CapsHashSet) -> Result<Held, PrivilegeError> {
    let lacking: CapsHashSet = TO_SWITCH
        .iter()
        .copied()
        .filter(|c| !now.permitted.contains(c))
        .collect();
    if !lacking.is_empty() {
        return Err(PrivilegeError::Missing {
            ids,
            missing: names(&lacking),
            held: names(&now.permitted),
        });
    }
    if !now.permitted.is_subset(&now.effective) {
        call(
            "capset effective",
            caps::set(None, CapSet::Effective, &now.permitted),
        )?;
    }
    call("PR_SET_KEEPCAPS 1", nix::sys::prctl::set_keepcaps(true))?;
    let (uid, gid) = (Uid::from_raw(ids.uid), Gid::from_raw(ids.gid));
    call(
        format!("setgroups [{}]", ids.gid),
        nix::unistd::setgroups(&[gid]),
    )?;
    call(
        format!("setresgid {}", ids.gid),
        nix::unistd::setresgid(gid, gid, gid),
    )?;
    call(
        format!("setresuid {}", ids.uid),
        nix::unistd::setresuid(uid, uid, uid),
    )?;
    call("PR_SET_KEEPCAPS 0", nix::sys::prctl::set_keepcaps(false))?;
    // The switch cleared the effective set; the permitted one is kept.
    let held = keep_at_most(&now.permitted, ceiling)?;
    if (held.uid, held.gid, held.groups.as_slice()) != (ids.uid, ids.gid, &[ids.gid][..]) {
        return Err(PrivilegeError::Kept {
            what: format!(
                "uid {} gid {} groups {:?} instead of {ids} groups [{}]",
                held.uid, held.gid, held.groups, ids.gid
            ),
        });
    }
    Ok(held)
}

/// Keeps `keep ∩ permitted` in the permitted and effective sets, empties
/// the ambient set and the inheritable one, and cuts the bounding set to
/// `keep` where CAP_SETPCAP allows; reads the result back. A capset that a
/// seccomp filter refuses (systemd's `SystemCallFilter=~@privileged`) is
/// accepted when only the inheritable set is left at a subset of `keep`:
/// with the ambient set empty it passes nothing on.
fn keep_at_most(permitted: &CapsHashSet, keep: &CapsHashSet) -> Result<Held, PrivilegeError> {
    let kept: CapsHashSet = keep.intersection(permitted).copied().collect();
    if permitted.contains(&Capability::CAP_SETPCAP) {
        let bounding = call("capget bounding", caps::read(None, CapSet::Bounding))?;
        let cut: Vec<Capability> = bounding.difference(keep).copied().collect();
        if !cut.is_empty() {
            let effective = call("capget effective", caps::read(None, CapSet::Effective))?;
            if !effective.contains(&Capability::CAP_SETPCAP) {
                call(
                    "capset effective",
                    caps::raise(None, CapSet::Effective, Capability::CAP_SETPCAP),
                )?;
            }
        }
        for c in cut {
            call(
                format!("PR_CAPBSET_DROP {c}"),
                caps::drop(None, CapSet::Bounding, c),
            )?;
        }
    }
    call("clear ambient", caps::clear(None, CapSet::Ambient))?;
    let now = Held::read()?;
    if now.effective != kept || now.permitted != kept || !now.inheritable.is_empty() {
        let set = call("capset inheritable", caps::clear(None, CapSet::Inheritable))
            .and_then(|()| {
                call(
                    "capset effective",
                    caps::set(None, CapSet::Effective, &kept),
                )
            })
            .and_then(|()| {
                call(
                    "capset permitted",
                    caps::set(None, CapSet::Permitted, &kept),
                )
            });
        let only_inheritable =
            now.effective == kept && now.permitted == kept && now.inheritable.is_subset(&kept);
        match set {
            Err(e) if !only_inheritable => return Err(e),
            _ => {}
        }
    }
    let held = Held::read()?;
    let mut extra: CapsHashSet = held
        .permitted
        .iter()
        .chain(&held.effective)
        .chain(&held.ambient)
        .filter(|c| !kept.contains(c))
        .copied()
        .collect();
    extra.extend(held.inheritable.difference(&kept));
    if permitted.contains(&Capability::CAP_SETPCAP) {
        extra.extend(held.bounding.difference(keep));
    }
    if !extra.is_empty() {
        return Err(PrivilegeError::Kept {
            what: names(&extra),
        });
    }
    Ok(held)
}

/// After the settings are read: hold exactly what `need` asks (of what
/// [`enter`] kept), cut the bounding set to it where [`enter`] kept
/// CAP_SETPCAP for that, and set `no_new_privs`. A root process without
/// `--user` is left as it is.
pub fn narrow(entered: &Held, need: Need) -> Result<Held, PrivilegeError> {
    if entered.untouched_root {
        return Ok(entered.clone());
    }
    let keep: CapsHashSet = match need {
        Need::Nothing => CapsHashSet::new(),
        Need::NetAdmin => [CEILING].into(),
    };
    call("PR_SET_NO_NEW_PRIVS", nix::sys::prctl::set_no_new_privs())?;
    let mut held = keep_at_most(&entered.permitted, &keep)?;
    held.missing = keep.difference(&held.permitted).next().copied();
    Ok(held)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_parse_numbers_and_refuse_root_and_names() {
        assert_eq!(
            "100:101".parse::<Ids>().expect("ids"),
            Ids { uid: 100, gid: 101 }
        );
        for (text, why) in [
            ("100", "no ':'"),
            ("frr:frr", "the uid is not a number"),
            ("100:frr", "the gid is not a number"),
            ("0:101", "0 would keep root's ids"),
            ("100:0", "0 would keep root's ids"),
        ] {
            let e = text.parse::<Ids>().expect_err(text).to_string();
            assert!(e.contains(why) && e.contains(text), "{text}: {e}");
        }
    }

    #[test]
    fn names_are_the_manifests_spelling() {
        assert_eq!(names(&CapsHashSet::new()), "none");
        assert_eq!(names(&caps::all()), "all");
        let set: CapsHashSet = [Capability::CAP_SETUID, Capability::CAP_NET_ADMIN].into();
        assert_eq!(names(&set), "NET_ADMIN,SETUID");
    }
}
