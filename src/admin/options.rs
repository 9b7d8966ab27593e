//! What the admin modes are given: whether to join a Hub, its preferred port, the Hub group name,
//! and the environment variables the link and `--open-admin` read.
//!
//! `config` validates the command line and builds these (it is the only place that reads the
//! server's environment); tests build them directly.
//!
//! Architecture invariant: this module reads nothing and knows nothing about the command line.

use std::ffi::OsString;
use std::path::PathBuf;

/// The default `--admin-ipc` group name.
pub const DEFAULT_ADMIN_IPC: &str = "forgemcp";
/// Longest accepted `--admin-ipc` name (it becomes part of a socket or pipe name).
pub const MAX_ADMIN_IPC_LEN: usize = 64;

/// Admin panel options; meaningful in every mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdminConfig {
    join_hub: bool,
    port: u16,
    ipc_name: String,
}

impl AdminConfig {
    /// The options as validated: `ipc_name` follows the rules of [`AdminConfig::ipc_name`].
    pub fn new(join_hub: bool, port: u16, ipc_name: String) -> AdminConfig {
        AdminConfig { join_hub, port, ipc_name }
    }

    /// False with `--no-admin`: this server does not join (or start) a Hub.
    pub fn join_hub(&self) -> bool {
        self.join_hub
    }

    /// Preferred HTTP port when starting a new Hub (0: any free port).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The Hub group name: non-empty ASCII letters, digits, `-`, `_`, `.`, not starting with `.`,
    /// at most [`MAX_ADMIN_IPC_LEN`] characters; safe as a file or pipe name component.
    pub fn ipc_name(&self) -> &str {
        &self.ipc_name
    }

    /// True when the group is not the default one (the startup hint then names `--admin-ipc`).
    pub fn is_default_ipc(&self) -> bool {
        is_default_ipc(&self.ipc_name)
    }
}

/// Whether `ipc_name` is the default group (messages then omit `--admin-ipc`).
pub fn is_default_ipc(ipc_name: &str) -> bool {
    ipc_name == DEFAULT_ADMIN_IPC
}

/// The environment variables the admin modes read, captured once at startup.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AdminEnv {
    /// `XDG_RUNTIME_DIR` (Unix): the per-user directory that holds the Hub's socket; without it a
    /// per-uid directory under the system temporary directory is used.
    pub runtime_dir: Option<PathBuf>,
    /// `BROWSER`: the browser command `--open-admin` prefers (Unix other than macOS).
    pub browser: Option<OsString>,
    /// `USERNAME` (Windows): part of the Hub's pipe name, which is machine-wide.
    pub user_name: Option<OsString>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_default_group_is_default() {
        assert!(AdminConfig::new(true, 8765, DEFAULT_ADMIN_IPC.to_owned()).is_default_ipc());
        assert!(!AdminConfig::new(true, 8765, "forgemcp-other".to_owned()).is_default_ipc());
        assert!(!is_default_ipc("Forgemcp"));
    }
}
