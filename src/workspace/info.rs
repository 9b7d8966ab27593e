//! Metadata of one managed file (`workspace_file_info`).
//!
//! Birth times exist only where the platform and file system record them; the owner is the
//! account name of the file's owner on Unix. On Windows the owner is not reported: it needs the
//! Win32 security API (unsafe FFI, which this crate denies), so it is always unavailable there.

use chrono::{DateTime, Utc};

use crate::call::Call;
use crate::workspace::opened::{Place, Purpose, open_checked};
use crate::workspace::path::{LinkPolicy, QualifiedPath};
use crate::workspace::{Error, WorkspaceService};

/// Metadata of one regular file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileInfo {
    pub path: QualifiedPath,
    /// `None` where the platform or file system records no birth time.
    pub created_at: Option<DateTime<Utc>>,
    pub modified_at: DateTime<Utc>,
    pub size_bytes: u64,
    /// The owning account's name; `None` when it cannot be determined.
    pub owner: Option<String>,
}

impl WorkspaceService {
    /// Reads the metadata of a managed regular file. In-root links are followed, as for reads.
    ///
    /// Progress: `0/1` at the start, `1/1` when done.
    pub fn file_info(&self, path: &QualifiedPath, call: &Call) -> Result<FileInfo, Error> {
        let _guard = self.read_lock();
        self.file_info_locked(path, call)
    }

    /// Like [`WorkspaceService::file_info`] when the workspace lock is free for reading now;
    /// `None` when a mutation holds or waits for it (the caller then waits on a blocking thread).
    pub fn try_file_info(&self, path: &QualifiedPath, call: &Call) -> Option<Result<FileInfo, Error>> {
        let _guard = self.lock.try_read()?;
        Some(self.file_info_locked(path, call))
    }

    fn file_info_locked(&self, path: &QualifiedPath, call: &Call) -> Result<FileInfo, Error> {
        if !path.is_managed() {
            return Err(Error::ExternalNotAllowed { path: path.clone() });
        }
        call.progress.report(0.0, Some(1.0), "Reading file information");
        let resolved = self.resolve_existing(path, LinkPolicy::FollowInsideRoots)?;
        let meta = open_checked(&resolved.abs, Place::InsideRoots(self.roots()), Purpose::Inspect)
            .and_then(|file| file.metadata())
            .map_err(|e| Error::io(path, e))?;
        if !meta.is_file() {
            return Err(Error::NotAFile { path: path.clone() });
        }
        let modified = meta.modified().map_err(|e| Error::io(path, e))?;
        let info = FileInfo {
            path: path.clone(),
            created_at: meta.created().ok().map(DateTime::<Utc>::from),
            modified_at: DateTime::<Utc>::from(modified),
            size_bytes: meta.len(),
            owner: owner_name(&meta),
        };
        call.progress.report(1.0, Some(1.0), "Read file information");
        Ok(info)
    }
}

/// Account names by uid, looked up once per server: the lookup reads the name-service
/// configuration and the account database (`/etc/nsswitch.conf`, `/etc/passwd`, …) each time.
#[cfg(unix)]
fn owner_name(meta: &std::fs::Metadata) -> Option<String> {
    use std::collections::HashMap;
    use std::os::unix::fs::MetadataExt;
    use std::sync::OnceLock;
    static NAMES: OnceLock<parking_lot::Mutex<HashMap<u32, Option<String>>>> = OnceLock::new();
    let names = NAMES.get_or_init(Default::default);
    let uid = meta.uid();
    if let Some(name) = names.lock().get(&uid) {
        return name.clone();
    }
    let name = match nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid)) {
        Ok(user) => user.map(|user| user.name),
        Err(err) => {
            // A failed lookup (not a missing account) is not remembered: it may succeed later.
            tracing::debug!(uid, "no account name for the file owner: {err}");
            return None;
        }
    };
    names.lock().insert(uid, name.clone());
    name
}

#[cfg(not(unix))]
fn owner_name(_meta: &std::fs::Metadata) -> Option<String> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::path::Roots;

    #[test]
    fn reports_size_times_and_owner_of_regular_files_only() {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(base.join("proj/sub")).unwrap();
        std::fs::write(base.join("proj/a.txt"), "hello").unwrap();
        let ws = WorkspaceService::new(Roots::new(base.join("proj"), base.join(".proj.forgemcp")));
        let q = |s: &str| QualifiedPath::parse(s).unwrap();
        let call = Call::detached();

        let info = ws.file_info(&q("a.txt"), &call).unwrap();
        assert_eq!(info.path.to_string(), "project/a.txt");
        assert_eq!(info.size_bytes, 5);
        assert!(info.modified_at <= Utc::now());
        #[cfg(unix)]
        {
            let me = nix::unistd::User::from_uid(nix::unistd::getuid()).ok().flatten().map(|user| user.name);
            assert_eq!(info.owner, me);
        }

        assert!(matches!(ws.file_info(&q("sub"), &call), Err(Error::NotAFile { .. })));
        assert!(matches!(ws.file_info(&q("nope.txt"), &call), Err(Error::Resolve(_))));
        assert!(matches!(ws.file_info(&q("root/etc/hosts"), &call), Err(Error::ExternalNotAllowed { .. })));
    }
}
