//! The drain's intent: a small file that says this node is drained, kept
//! by ribbridge itself, so that a drain outlives a reload that rewrites
//! bgpd's whole configuration (frr-k8s's `frr-reload.py --reload
//! --overwrite` removes the drain's route-map entry with every other line
//! it did not write).
//!
//! Contract:
//! - The file holds one JSON document, `{"drained": true, "since":
//!   "2026-12-01T19:49:29Z", "tables": [198]}` (`since`: RFC 3339, UTC,
//!   seconds). Its presence with `drained: true` is the intent; absent, or
//!   `drained: false`, the node is not drained by intent.
//! - [`DrainState::write`] replaces it atomically: a temporary file in the
//!   same directory (mode 0644: FRR's tools and an operator may read it),
//!   synced, renamed over the target, the directory synced; a reader sees
//!   the old document or the new one, never part of either. The directory
//!   must exist: `write` never creates it.
//! - [`DrainState::read`] is for the daemon and `ribbridge render`: an
//!   absent file is `None`; an unreadable or garbled one is an error naming
//!   the file.
//! - [`ensure_dir`] is for `ribbridge drain` on a host as it is (no unit
//!   or pod made the directory yet): it makes the missing directory, mode
//!   0755, only where its parent is a tmpfs (`/run`), so that the intent
//!   still ends with a reboot; anywhere else it says why it does not.
//! - Its default place is [`crate::config::DEFAULT_DRAIN_STATE`]
//!   (`/run/ribbridge/drain`): a tmpfs, so a reboot ends the drain as it
//!   ends FRR's running configuration.

use std::fs::{File, OpenOptions, Permissions};
use std::io::{ErrorKind, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use super::DrainError;
use crate::model::TableId;

/// The mode of the intent file: anyone on the node may read it.
pub const MODE: u32 = 0o644;

/// A recorded drain intent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DrainState {
    /// When the drain was first asked for (kept when a drain is asked again).
    pub since: SystemTime,
    /// The VIP tables drained.
    pub tables: Vec<TableId>,
}

/// The document as the file spells it.
#[derive(Debug, Serialize, Deserialize)]
struct Doc {
    drained: bool,
    since: String,
    tables: Vec<TableId>,
}

impl DrainState {
    /// A drain of `tables` asked for at `since`.
    pub fn new(tables: Vec<TableId>, since: SystemTime) -> DrainState {
        DrainState { since, tables }
    }

    /// The document, one line of JSON with a final newline.
    pub fn to_json(&self) -> String {
        let doc = Doc {
            drained: true,
            since: humantime::format_rfc3339_seconds(self.since).to_string(),
            tables: self.tables.clone(),
        };
        // A struct of a bool, a string and numbers always serialises.
        let mut text = serde_json::to_string(&doc).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Parse the document `text` read from `path` (named in errors);
    /// `drained: false` is `None`.
    pub fn from_json(path: &Path, text: &str) -> Result<Option<DrainState>, DrainError> {
        let doc: Doc = serde_json::from_str(text).map_err(|source| DrainError::StateGarbled {
            path: path.to_path_buf(),
            source,
        })?;
        if !doc.drained {
            return Ok(None);
        }
        let since =
            humantime::parse_rfc3339(&doc.since).map_err(|source| DrainError::StateSince {
                path: path.to_path_buf(),
                text: doc.since.clone(),
                source,
            })?;
        Ok(Some(DrainState {
            since,
            tables: doc.tables,
        }))
    }

    /// The intent recorded at `path`: `None` when the file is absent (or
    /// says `drained: false`); an error naming the file when it cannot be
    /// read or is not such a document.
    pub fn read(path: &Path) -> Result<Option<DrainState>, DrainError> {
        match std::fs::read_to_string(path) {
            Ok(text) => DrainState::from_json(path, &text),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(source) => Err(DrainError::StateRead {
                path: path.to_path_buf(),
                source,
            }),
        }
    }

    /// Record the intent at `path`, atomically (see the module
    /// documentation). On failure the temporary file is removed, the
    /// previous file (if any) is untouched, and the error names `path`.
    pub fn write(&self, path: &Path) -> Result<(), DrainError> {
        let err = |source: std::io::Error| DrainError::StateWrite {
            path: path.to_path_buf(),
            source,
        };
        let Some((dir, tmp)) = crate::model::temp_beside(path) else {
            return Err(err(std::io::Error::new(
                ErrorKind::InvalidInput,
                "the path names no file",
            )));
        };
        let result = write_new(&tmp, &self.to_json()).and_then(|()| std::fs::rename(&tmp, path));
        if let Err(e) = result {
            let _ = std::fs::remove_file(&tmp);
            return Err(err(e));
        }
        // The rename is durable only once the directory is synced.
        File::open(&dir).and_then(|d| d.sync_all()).map_err(err)
    }

    /// Remove the intent at `path`: `true` when a file was removed, `false`
    /// when there was none.
    pub fn remove(path: &Path) -> Result<bool, DrainError> {
        match std::fs::remove_file(path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(false),
            Err(source) => Err(DrainError::StateRemove {
                path: path.to_path_buf(),
                source,
            }),
        }
    }
}

/// The mode of a directory [`ensure_dir`] makes.
pub const DIR_MODE: u32 = 0o755;

/// Make the directory of the intent file at `path` when it is missing and
/// its own parent is a tmpfs: `Ok(true)` when it was made, `Ok(false)`
/// when it was there. An intent on a disk would outlive a reboot, and a
/// daemon would re-apply that drain at the node's next start: anywhere but
/// a tmpfs the directory is not made, and the error says so.
pub fn ensure_dir(path: &Path) -> Result<bool, DrainError> {
    let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) else {
        return Ok(false);
    };
    if dir.is_dir() {
        return Ok(false);
    }
    let err = |why: String| DrainError::StateDir {
        dir: dir.to_path_buf(),
        why,
    };
    let parent = dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let fs = nix::sys::statfs::statfs(parent)
        .map_err(|e| err(format!("{} cannot be examined: {e}", parent.display())))?;
    if fs.filesystem_type() != nix::sys::statfs::TMPFS_MAGIC {
        return Err(err(format!(
            "{} is not a tmpfs, and an intent kept there would outlive a reboot",
            parent.display()
        )));
    }
    match std::fs::DirBuilder::new().mode(DIR_MODE).create(dir) {
        Ok(()) => {}
        // Made by someone else meanwhile: as good.
        Err(e) if e.kind() == ErrorKind::AlreadyExists => return Ok(false),
        Err(e) => return Err(err(format!("it cannot be made: {e}"))),
    }
    // The umask may have narrowed the mode; set it exactly.
    std::fs::set_permissions(dir, Permissions::from_mode(DIR_MODE))
        .map_err(|e| err(format!("its mode cannot be set: {e}")))?;
    Ok(true)
}

/// Create `file` (it must not exist) with [`MODE`], write and sync `text`.
fn write_new(file: &Path, text: &str) -> std::io::Result<()> {
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(MODE)
        .open(file)?;
    // The umask may have narrowed the mode given to open; set it exactly.
    f.set_permissions(Permissions::from_mode(MODE))?;
    f.write_all(text.as_bytes())?;
    f.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;
    use std::time::Duration;

    fn at(secs: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[test]
    fn round_trip_through_the_file() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("drain");
        let s = DrainState::new(vec![198, 199], at(1_796_154_569));
        s.write(&path).expect("write");
        let text = std::fs::read_to_string(&path).expect("read");
        assert_eq!(
            text,
            "{\"drained\":true,\"since\":\"2026-12-01T19:49:29Z\",\"tables\":[198,199]}\n"
        );
        assert_eq!(DrainState::read(&path).expect("read"), Some(s));
        let mode = std::fs::metadata(&path).expect("stat").permissions().mode() & 0o777;
        assert_eq!(mode, MODE, "{mode:o}");
        // Only the file itself is left in the directory.
        let names: Vec<_> = std::fs::read_dir(tmp.path())
            .expect("ls")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, ["drain"]);
    }

    #[test]
    fn an_absent_file_is_no_intent_and_remove_says_so() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("drain");
        assert_eq!(DrainState::read(&path).expect("absent"), None);
        assert!(!DrainState::remove(&path).expect("absent"));
        DrainState::new(vec![198], at(0))
            .write(&path)
            .expect("write");
        assert!(DrainState::remove(&path).expect("removed"));
        assert!(!path.exists());
    }

    #[test]
    fn drained_false_is_no_intent() {
        let p = Path::new("/run/ribbridge/drain");
        let doc = "{\"drained\": false, \"since\": \"2026-12-01T19:49:29Z\", \"tables\": [198]}";
        assert_eq!(DrainState::from_json(p, doc).expect("parses"), None);
    }

    #[test]
    fn a_garbled_file_is_an_error_naming_it() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("drain");
        std::fs::write(&path, "drained\n").expect("write");
        let e = DrainState::read(&path).expect_err("garbled");
        assert!(matches!(e, DrainError::StateGarbled { .. }), "{e:?}");
        let msg = e.to_string();
        assert!(
            msg.starts_with(&format!(
                "{}: not a ribbridge drain intent (",
                path.display()
            )),
            "{msg}"
        );
        assert!(msg.contains("ribbridge undrain"), "{msg}");
        assert!(e.source().is_some());
        // A wrong timestamp names the text.
        std::fs::write(
            &path,
            "{\"drained\": true, \"since\": \"yesterday\", \"tables\": [198]}",
        )
        .expect("write");
        let msg = DrainState::read(&path).expect_err("since").to_string();
        assert!(msg.contains("'yesterday' is not an RFC 3339 time"), "{msg}");
        // A missing key too.
        std::fs::write(&path, "{\"drained\": true}").expect("write");
        let msg = DrainState::read(&path).expect_err("keys").to_string();
        assert!(msg.contains("missing field `since`"), "{msg}");
    }

    #[test]
    fn an_unreadable_path_is_an_error_naming_it() {
        let tmp = tempfile::tempdir().expect("tempdir");
        // A directory where the file should be.
        let e = DrainState::read(tmp.path()).expect_err("a directory");
        assert!(matches!(e, DrainError::StateRead { .. }), "{e:?}");
        assert!(e.to_string().contains(&tmp.path().display().to_string()));
    }

    #[test]
    fn the_write_is_atomic_and_a_failure_leaves_the_old_file() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("drain");
        let old = DrainState::new(vec![198], at(100));
        old.write(&path).expect("write");
        // Replaced by rename: a reader holding the old file still reads it
        // whole, and the path has the new document.
        let before = std::fs::read_to_string(&path).expect("read");
        let held = File::open(&path).expect("open");
        let new = DrainState::new(vec![198, 199], at(200));
        new.write(&path).expect("rewrite");
        let mut was = String::new();
        std::io::Read::read_to_string(&mut &held, &mut was).expect("read held");
        assert_eq!(was, before);
        assert_eq!(DrainState::read(&path).expect("read"), Some(new.clone()));
        // A directory that does not exist: an error naming the target, no
        // directory created.
        let missing = tmp.path().join("no-such-dir/drain");
        let e = old.write(&missing).expect_err("no directory");
        assert!(matches!(e, DrainError::StateWrite { .. }), "{e:?}");
        let msg = e.to_string();
        assert!(
            msg.starts_with(&format!(
                "cannot record the drain intent in {}",
                missing.display()
            )),
            "{msg}"
        );
        assert!(msg.contains("mount a writable directory at"), "{msg}");
        assert!(!missing.parent().expect("parent").exists());
        // A read-only directory (unless root, who may write anyway): the
        // old file is untouched and no temporary file is left.
        let ro = tmp.path().join("ro");
        std::fs::create_dir(&ro).expect("mkdir");
        let ro_file = ro.join("drain");
        old.write(&ro_file).expect("write");
        std::fs::set_permissions(&ro, Permissions::from_mode(0o555)).expect("chmod");
        if new.write(&ro_file).is_err() {
            assert_eq!(DrainState::read(&ro_file).expect("read"), Some(old.clone()));
            assert_eq!(std::fs::read_dir(&ro).expect("ls").count(), 1);
        }
        std::fs::set_permissions(&ro, Permissions::from_mode(0o755)).expect("chmod");
    }

    #[test]
    fn a_missing_directory_is_made_on_a_tmpfs_only() {
        // /dev/shm is a tmpfs on every Linux this runs on.
        let shm = tempfile::tempdir_in("/dev/shm").expect("a directory in /dev/shm");
        let file = shm.path().join("ribbridge/drain");
        assert!(ensure_dir(&file).expect("made"));
        let meta = std::fs::metadata(shm.path().join("ribbridge")).expect("made");
        assert_eq!(meta.permissions().mode() & 0o777, DIR_MODE);
        assert!(!ensure_dir(&file).expect("there"), "made once");
        DrainState::new(vec![198], crate::clock::wall())
            .write(&file)
            .expect("the intent fits in it");
        // /proc is no tmpfs: nothing made, and the error says why.
        let e = ensure_dir(Path::new("/proc/ribbridge-nonexistent/drain")).expect_err("procfs");
        assert!(matches!(e, DrainError::StateDir { .. }), "{e:?}");
        assert!(e.to_string().contains("/proc is not a tmpfs"), "{e}");
        assert!(e.to_string().contains("outlive a reboot"), "{e}");
        // A missing parent cannot be examined: an error naming it.
        let e = ensure_dir(&shm.path().join("a/b/drain")).expect_err("no parent");
        assert!(e.to_string().contains("cannot be examined"), "{e}");
    }
}
