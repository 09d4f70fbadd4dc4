//! Writing frr.conf: atomically, and not at all when it would not change.
//!
//! Contract: [`write_if_changed`] leaves the target exactly as it was when
//! its bytes equal the new text (FRR and file watchers see nothing), else it
//! writes a temporary file in the same directory with mode 0640 (and the
//! owner and group of the file it replaces), syncs it,
//! renames it over the target and syncs the directory, so a reader sees the
//! old file or the new one, never a part of either. On failure the temporary
//! file is removed and the target is untouched; the error names the target
//! (`cannot write /etc/frr/frr.conf: ...`), never the temporary file.

use std::fs::{File, OpenOptions, Permissions};
use std::io::{ErrorKind, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The mode of a written frr.conf: FRR's group may read it, nobody else
/// (it can hold BGP passwords).
pub const MODE: u32 = 0o640;

/// What [`write_if_changed`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// The file was replaced (or created).
    Written,
    /// The file already held exactly this text; it was not touched.
    Unchanged,
}

/// Why frr.conf could not be written. Every message names the target file,
/// never the temporary file the write goes through.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The path ends in `..` or `/`: it names no file.
    #[error("{}: --out must name a file", path.display())]
    NotAFile {
        /// The path given.
        path: PathBuf,
    },
    /// The current file exists but cannot be read or stat'ed.
    #[error("{}: cannot read the current file: {source}", path.display())]
    ReadCurrent {
        /// The target.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Creating, writing, syncing or renaming the new file failed; the
    /// target is untouched.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The target.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The new file cannot get the owner of the file it replaces.
    #[error(
        "cannot write {}: cannot give the new file the owner {uid}:{gid} of the file it \
         replaces: {source}; run as root or as that owner",
        path.display()
    )]
    Owner {
        /// The target.
        path: PathBuf,
        /// The owner of the current file.
        uid: u32,
        /// Its group.
        gid: u32,
        /// Why.
        source: std::io::Error,
    },
    /// The file was replaced, but its directory could not be synced, so the
    /// rename may not survive a crash.
    #[error(
        "wrote {} but cannot sync its directory {}: {source}",
        path.display(),
        dir.display()
    )]
    SyncDir {
        /// The target.
        path: PathBuf,
        /// Its directory.
        dir: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// Write `text` to `path` unless it already holds it.
pub fn write_if_changed(path: &Path, text: &str) -> Result<Written, OutputError> {
    let owner = match std::fs::read(path) {
        Ok(old) if old == text.as_bytes() => return Ok(Written::Unchanged),
        // The replacement keeps the owner and group of the file it replaces,
        // so FRR's group can still read it.
        Ok(_) => std::fs::metadata(path)
            .map(|m| Some((m.uid(), m.gid())))
            .map_err(|source| OutputError::ReadCurrent {
                path: path.to_path_buf(),
                source,
            })?,
        Err(e) if e.kind() == ErrorKind::NotFound => None,
        Err(source) => {
            return Err(OutputError::ReadCurrent {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let Some((dir, tmp)) = crate::model::temp_beside(path) else {
        return Err(OutputError::NotAFile {
            path: path.to_path_buf(),
        });
    };
    let result = write_new(&tmp, text, owner).and_then(|()| {
        std::fs::rename(&tmp, path).map_err(|source| OutputError::Write {
            path: tmp.clone(),
            source,
        })
    });
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        // The temporary file is ours; the user knows the target.
        return Err(e.named(path));
    }
    // The rename is durable only once the directory is synced.
    File::open(&dir)
        .and_then(|d| d.sync_all())
        .map_err(|source| OutputError::SyncDir {
            path: path.to_path_buf(),
            dir,
            source,
        })?;
    Ok(Written::Written)
}

impl OutputError {
    /// The same error about `path`.
    fn named(self, path: &Path) -> OutputError {
        let path = path.to_path_buf();
        match self {
            OutputError::NotAFile { .. } => OutputError::NotAFile { path },
            OutputError::ReadCurrent { source, .. } => OutputError::ReadCurrent { path, source },
            OutputError::Write { source, .. } => OutputError::Write { path, source },
            OutputError::Owner {
                uid, gid, source, ..
            } => OutputError::Owner {
                path,
                uid,
                gid,
                source,
            },
            OutputError::SyncDir { dir, source, .. } => OutputError::SyncDir { path, dir, source },
        }
    }
}

/// Create `file` (it must not exist) with mode 0640 and `owner` (uid, gid)
/// when given, write and sync `text` into it. Errors name `file`.
pub fn write_new(file: &Path, text: &str, owner: Option<(u32, u32)>) -> Result<(), OutputError> {
    let what = |source: std::io::Error| OutputError::Write {
        path: file.to_path_buf(),
        source,
    };
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(MODE)
        .open(file)
        .map_err(what)?;
    // The umask may have narrowed the mode given to open; set it exactly.
    f.set_permissions(Permissions::from_mode(MODE))
        .map_err(what)?;
    if let Some((uid, gid)) = owner {
        std::os::unix::fs::fchown(&f, Some(uid), Some(gid)).map_err(|source| {
            OutputError::Owner {
                path: file.to_path_buf(),
                uid,
                gid,
                source,
            }
        })?;
    }
    f.write_all(text.as_bytes()).map_err(what)?;
    f.sync_all().map_err(what)
}
