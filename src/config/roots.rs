//! `--workspace` and `--workspace-storage`: the project root (canonical, an existing directory) and
//! the storage root (canonical up to its first missing component, writable or creatable, apart from
//! the project); `--exclude-dir`: project directories searches and finds leave out.

use std::ffi::OsString;
use std::io;
use std::path::{Component, Path, PathBuf};

use super::error::{ConfigError, StorageOrigin, shown_path};

pub(super) fn workspace_root(given: Option<&Path>, cwd: &Path) -> Result<PathBuf, ConfigError> {
    let given = match given {
        Some(path) if path.as_os_str().is_empty() => return Err(ConfigError::EmptyPath { option: "--workspace" }),
        Some(path) => path,
        None => cwd,
    };
    let canonical = std::fs::canonicalize(cwd.join(given)).map_err(|reason| match reason.kind() {
        io::ErrorKind::NotFound => ConfigError::WorkspaceMissing { path: given.to_path_buf() },
        _ => ConfigError::WorkspaceUnreadable { path: given.to_path_buf(), reason },
    })?;
    if !canonical.is_dir() {
        return Err(ConfigError::WorkspaceNotDirectory { path: given.to_path_buf() });
    }
    Ok(canonical)
}

pub(super) fn storage_root(given: Option<&Path>, project: &Path, cwd: &Path) -> Result<PathBuf, ConfigError> {
    // `path` is what messages show: the value as given, or the computed default.
    let (origin, path, absolute) = match given {
        Some(path) if path.as_os_str().is_empty() => {
            return Err(ConfigError::EmptyPath { option: "--workspace-storage" });
        }
        Some(path) => (StorageOrigin::Option, path.to_path_buf(), cwd.join(path)),
        None => {
            let (Some(parent), Some(name)) = (project.parent(), project.file_name()) else {
                return Err(ConfigError::NoDefaultStorage { path: project.to_path_buf() });
            };
            let mut dir_name = OsString::from(".");
            dir_name.push(name);
            dir_name.push(".forgemcp");
            let path = parent.join(dir_name);
            (StorageOrigin::Default, path.clone(), path)
        }
    };
    let storage = canonicalize_existing_prefix(&absolute).map_err(|reason| ConfigError::StorageUnreadable {
        origin,
        path: path.clone(),
        reason,
    })?;
    match std::fs::metadata(&storage) {
        Ok(meta) if !meta.is_dir() => return Err(ConfigError::StorageNotDirectory { origin, path }),
        Ok(_) => {}
        Err(err) if err.kind() == io::ErrorKind::NotFound => {}
        Err(reason) => return Err(ConfigError::StorageUnreadable { origin, path, reason }),
    }
    if storage == project {
        return Err(ConfigError::StorageIsProject { origin, path });
    }
    if let Err(problem) = creatable(&storage) {
        return Err(ConfigError::StorageNotCreatable { origin, path, problem });
    }
    if project.starts_with(&storage) {
        return Err(ConfigError::StorageContainsProject { origin, path, project: project.to_path_buf() });
    }
    if storage.starts_with(project) {
        return Err(ConfigError::StorageInsideProject { origin, path, project: project.to_path_buf() });
    }
    Ok(storage)
}

/// The `--exclude-dir` values as absolute directories inside the project: relative, `/`-separated
/// names without `.`, `..` or empty segments (a trailing `/` is accepted).
pub(super) fn excluded_dirs(values: &[String], project: &Path) -> Result<Vec<PathBuf>, ConfigError> {
    values
        .iter()
        .map(|value| {
            let fail = |problem| Err(ConfigError::ExcludeDir { value: value.clone(), problem });
            let trimmed = value.strip_suffix('/').unwrap_or(value);
            if trimmed.is_empty() {
                return fail("the path is empty");
            }
            if trimmed.starts_with('/') || trimmed.contains('\\') || Path::new(trimmed).is_absolute() {
                return fail("must be a path relative to the project root");
            }
            if trimmed.split('/').any(|segment| matches!(segment, "" | "." | "..")) {
                return fail("must not contain empty, `.` or `..` segments");
            }
            Ok(project.join(trimmed))
        })
        .collect()
}

/// Whether the storage directory `storage` (absolute, links resolved in its existing part) exists
/// and is writable, or could be created, without creating anything: its nearest existing ancestor
/// must be a directory this process may write to and search (`access(2)`, which also sees read-only
/// file systems). Elsewhere than Unix only the ancestor's kind is checked.
fn creatable(storage: &Path) -> Result<(), String> {
    let mut existing = storage;
    loop {
        match std::fs::metadata(existing) {
            Ok(meta) if meta.is_dir() => break,
            Ok(_) => return Err(format!("{} is not a directory", shown_path(existing))),
            Err(err) if err.kind() == io::ErrorKind::NotFound => match existing.parent() {
                Some(parent) => existing = parent,
                None => return Err("no part of the path exists".to_owned()),
            },
            Err(err) => return Err(format!("{}: {err}", shown_path(existing))),
        }
    }
    #[cfg(unix)]
    {
        use rustix::fs::{Access, access};
        if let Err(err) = access(existing, Access::WRITE_OK | Access::EXEC_OK) {
            return Err(format!("{} is not writable: {}", shown_path(existing), io::Error::from(err)));
        }
    }
    if existing != storage {
        // Permission bits do not tell everything (a superuser passes `access`, yet /proc takes no
        // directory): create and remove a probe directory where the first missing one would go.
        let probe = existing.join(format!(".forgemcp-probe-{}", std::process::id()));
        std::fs::create_dir(&probe)
            .map_err(|err| format!("{} does not take new directories: {err}", shown_path(existing)))?;
        let _ = std::fs::remove_dir(&probe);
    }
    Ok(())
}

/// Resolves links in the existing part of an absolute path and appends the missing rest lexically
/// (missing directories cannot be links, so `..` there simply drops the previous name). A link
/// whose target is missing is an error: the directory could not be created through it.
fn canonicalize_existing_prefix(path: &Path) -> io::Result<PathBuf> {
    let mut res = PathBuf::new();
    let mut exists = true;
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => res.push(component),
            Component::CurDir => {}
            // `res` is canonical (or below a missing directory), so its lexical parent is the real one.
            Component::ParentDir => {
                res.pop();
            }
            Component::Normal(name) => {
                res.push(name);
                if !exists {
                    continue;
                }
                match std::fs::canonicalize(&res) {
                    Ok(canonical) => res = canonical,
                    Err(err) if err.kind() == io::ErrorKind::NotFound => {
                        if std::fs::symlink_metadata(&res).is_ok() {
                            return Err(io::Error::other(format!("{} is a broken link", res.display())));
                        }
                        exists = false;
                    }
                    Err(err) => return Err(err),
                }
            }
        }
    }
    Ok(res)
}
