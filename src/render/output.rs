//! Writing frr.conf: atomically, and not at all when it would not change.
//!
//! Contract: [`write_if_changed`] leaves the target exactly as it was when
//! its bytes equal the new text (FRR and file watchers see nothing), else it
//! writes a temporary file in the same directory with mode 0640 (and the
//! owner and group of the file it replaces), syncs it,
//! renames it over the target and syncs the directory, so a reader sees the
//! old file or the new one, never a part of either. On failure the temporary
//! file is removed and the target is untouched.

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

/// Write `text` to `path` unless it already holds it.
pub fn write_if_changed(path: &Path, text: &str) -> Result<Written, String> {
    let owner = match std::fs::read(path) {
        Ok(old) if old == text.as_bytes() => return Ok(Written::Unchanged),
        // The replacement keeps the owner and group of the file it replaces,
        // so FRR's group can still read it.
        Ok(_) => std::fs::metadata(path)
            .map(|m| Some((m.uid(), m.gid())))
            .map_err(|e| format!("{}: cannot stat the current file: {e}", path.display()))?,
        Err(e) if e.kind() == ErrorKind::NotFound => None,
        Err(e) => {
            return Err(format!(
                "{}: cannot read the current file: {e}",
                path.display()
            ));
        }
    };
    let name = path
        .file_name()
        .ok_or_else(|| format!("{}: --out must name a file", path.display()))?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let tmp = dir.join(format!(
        ".{}.ribbridge-{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = write_new(&tmp, text, owner).and_then(|()| {
        std::fs::rename(&tmp, path)
            .map_err(|e| format!("cannot rename {} to {}: {e}", tmp.display(), path.display()))
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result?;
    // The rename is durable only once the directory is synced.
    File::open(&dir).and_then(|d| d.sync_all()).map_err(|e| {
        format!(
            "{}: wrote the file but cannot sync its directory: {e}",
            dir.display()
        )
    })?;
    Ok(Written::Written)
}

/// Create `tmp` (it must not exist) with mode 0640 and `owner` (uid, gid)
/// when given, write and sync `text` into it.
pub fn write_new(tmp: &Path, text: &str, owner: Option<(u32, u32)>) -> Result<(), String> {
    let what = |e: std::io::Error| format!("cannot write {}: {e}", tmp.display());
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(MODE)
        .open(tmp)
        .map_err(what)?;
    // The umask may have narrowed the mode given to open; set it exactly.
    f.set_permissions(Permissions::from_mode(MODE))
        .map_err(what)?;
    if let Some((uid, gid)) = owner {
        std::os::unix::fs::fchown(&f, Some(uid), Some(gid)).map_err(|e| {
            format!(
                "cannot give {} the owner {uid}:{gid} of the file it replaces: {e}",
                tmp.display()
            )
        })?;
    }
    f.write_all(text.as_bytes()).map_err(what)?;
    f.sync_all().map_err(what)
}
