//! The admin options: `--no-admin`, `--admin-port` and the `--admin-ipc` group name.

use super::error::ConfigError;
use crate::admin::options::{AdminConfig, MAX_ADMIN_IPC_LEN};
use crate::cli;

pub(super) fn admin_config(args: &cli::Args) -> Result<AdminConfig, ConfigError> {
    let name = &args.admin_ipc;
    let problem = if name.is_empty() {
        Some("the name is empty")
    } else if name.starts_with('.') {
        Some("the name must not start with '.'")
    } else if name.len() > MAX_ADMIN_IPC_LEN {
        Some("the name is longer than 64 characters")
    } else if !name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')) {
        Some("use only ASCII letters, digits, '-', '_' and '.'")
    } else {
        None
    };
    if let Some(problem) = problem {
        return Err(ConfigError::AdminIpcName { name: name.clone(), problem });
    }
    Ok(AdminConfig::new(!args.no_admin, args.admin_port, name.clone()))
}
