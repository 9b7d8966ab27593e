//! `--toolset NAME TOOL=PATH…` groups, and the toolset ids and names a selector may name before
//! discovery.

use std::io;
use std::path::{Path, PathBuf};

use super::error::{ConfigError, quoted};
use crate::toolchain::spec;
use crate::toolchain::{UserTool, UserToolsetSpec};

/// The toolset ids and names known before discovery: the System toolset and the user toolsets.
/// Visual Studio toolsets exist only on Windows and only discovery finds them, so there every
/// selector may name one.
pub(super) struct KnownToolsets {
    names: Vec<String>,
    ids: Vec<String>,
}

impl KnownToolsets {
    pub(super) fn new(user: &[UserToolsetSpec]) -> KnownToolsets {
        let mut names = vec![crate::toolchain::SYSTEM_NAME.to_owned()];
        let mut ids = vec![crate::toolchain::SYSTEM_ID.to_owned()];
        for toolset in user {
            names.push(toolset.name.clone());
            ids.push(crate::toolchain::ToolsetId::user(&toolset.name).as_str().to_owned());
        }
        KnownToolsets { names, ids }
    }

    /// Whether a toolset with this id or name can exist once discovery ran.
    pub(super) fn may_exist(&self, value: &str) -> bool {
        cfg!(windows) || self.names.iter().chain(&self.ids).any(|known| known == value)
    }

    /// The names for a message (ids are `system` and `user-<sha256 of the name>`).
    pub(super) fn shown(&self) -> String {
        let names: Vec<String> = self.names.iter().map(|name| quoted(name)).collect();
        format!("{}, or their ids", names.join(", "))
    }
}

pub(super) fn user_toolsets(groups: &[Vec<String>], cwd: &Path) -> Result<Vec<UserToolsetSpec>, ConfigError> {
    let mut res: Vec<UserToolsetSpec> = Vec::with_capacity(groups.len());
    for group in groups {
        let Some((name, entries)) = group.split_first() else { continue };
        let name_problem = if name.trim().is_empty() {
            Some("the name is empty")
        } else if name.contains('=') {
            Some("the first value is the toolset name and must not contain '='")
        } else if name == "system" || name == "System" {
            Some("the name is reserved for the System toolset")
        } else {
            None
        };
        if let Some(problem) = name_problem {
            return Err(ConfigError::ToolsetName { name: name.clone(), problem });
        }
        if res.iter().any(|toolset| toolset.name == *name) {
            return Err(ConfigError::DuplicateToolset { name: name.clone() });
        }
        if entries.is_empty() {
            return Err(ConfigError::ToolsetName { name: name.clone(), problem: "no TOOL=PATH follows the name" });
        }
        let mut tools: Vec<UserTool> = Vec::with_capacity(entries.len());
        for entry in entries {
            let Some((tool, path)) = entry.split_once('=') else {
                return Err(ConfigError::ToolEntry { toolset: name.clone(), entry: entry.clone() });
            };
            let err_tool = || (name.clone(), tool.to_owned());
            let Some(spec) = spec::lookup(tool) else {
                let (toolset, tool) = err_tool();
                return Err(ConfigError::UnknownTool { toolset, tool });
            };
            if tools.iter().any(|known| known.spec.name == spec.name) {
                let (toolset, tool) = err_tool();
                return Err(ConfigError::RepeatedTool { toolset, tool });
            }
            if !spec.is_supported_here() {
                let (toolset, tool) = err_tool();
                return Err(ConfigError::WindowsOnlyTool { toolset, tool });
            }
            if path.is_empty() {
                let (toolset, tool) = err_tool();
                return Err(ConfigError::EmptyToolPath { toolset, tool });
            }
            let path = tool_path(name, tool, Path::new(path), cwd)?;
            tools.push(UserTool { spec, path });
        }
        res.push(UserToolsetSpec { name: name.clone(), tools });
    }
    Ok(res)
}

/// Makes a tool path absolute (against `cwd`, without resolving links) and checks that it names an
/// executable file.
fn tool_path(toolset: &str, tool: &str, given: &Path, cwd: &Path) -> Result<PathBuf, ConfigError> {
    let path: PathBuf = cwd.join(given).components().collect();
    let (toolset, tool) = (toolset.to_owned(), tool.to_owned());
    let meta = match std::fs::metadata(&path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            return Err(ConfigError::ToolPathMissing { toolset, tool, path: given.to_path_buf() });
        }
        Err(reason) => {
            return Err(ConfigError::ToolPathUnreadable { toolset, tool, path: given.to_path_buf(), reason });
        }
    };
    if !meta.is_file() {
        return Err(ConfigError::ToolPathNotFile { toolset, tool, path: given.to_path_buf() });
    }
    if let Err(hint) = check_executable(&path, &meta) {
        return Err(ConfigError::ToolPathNotExecutable { toolset, tool, path: given.to_path_buf(), hint });
    }
    Ok(path)
}

#[cfg(unix)]
fn check_executable(_path: &Path, meta: &std::fs::Metadata) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt as _;
    match meta.permissions().mode() & 0o111 {
        0 => Err("no execute permission".to_owned()),
        _ => Ok(()),
    }
}

#[cfg(windows)]
fn check_executable(path: &Path, _meta: &std::fs::Metadata) -> Result<(), String> {
    let pathext = std::env::var_os("PATHEXT").and_then(|value| value.into_string().ok());
    let pathext = pathext.as_deref().unwrap_or(".COM;.EXE;.BAT;.CMD");
    let extension = path.extension().and_then(|ext| ext.to_str()).map(|ext| format!(".{ext}"));
    let listed = |ext: &str| pathext.split(';').any(|known| !known.is_empty() && known.eq_ignore_ascii_case(ext));
    match extension {
        Some(ext) if listed(&ext) => Ok(()),
        _ => Err(format!("its extension is not listed in PATHEXT {pathext}")),
    }
}

#[cfg(not(any(unix, windows)))]
fn check_executable(_path: &Path, _meta: &std::fs::Metadata) -> Result<(), String> {
    Ok(())
}
