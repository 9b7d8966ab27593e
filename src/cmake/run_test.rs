//! Direct test runs (`cmake_run_test`): one built executable in `project/` or `storage/`, literal
//! arguments, stdin closed, the server's environment.

use super::output::failure;
use super::{CmakeService, Error, RunTestOutcome};
use crate::call::Call;
use crate::process::Timeout;
use crate::text::error_chain;
use crate::workspace::path::LinkPolicy;

impl CmakeService {
    /// `cmake_run_test`: runs one built executable in `project/` or `storage/` with literal
    /// arguments, stdin closed and the server's environment. Argument problems are errors; a failed
    /// run is the outcome's `error`.
    pub async fn run_test(
        &self,
        executable: &str,
        arguments: Vec<String>,
        cwd: &str,
        timeout: Timeout,
        call: &Call,
    ) -> Result<RunTestOutcome, Error> {
        let argument = |argument: &'static str| move |reason: String| Error::Argument { argument, reason };
        let exe_path = self.workspace.parse_managed(executable).map_err(|e| argument("executable")(error_chain(&e)))?;
        let exe = self
            .roots()
            .resolve_existing(&exe_path, LinkPolicy::FollowInsideRoots)
            .map_err(|e| argument("executable")(error_chain(&e)))?;
        if !exe.abs.is_file() {
            return Err(argument("executable")(format!("`{exe_path}` is not a regular file")));
        }
        if cfg!(windows)
            && exe
                .abs
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| e.eq_ignore_ascii_case("bat") || e.eq_ignore_ascii_case("cmd"))
        {
            return Err(argument("executable")(format!("`{exe_path}` is a batch file; batch files are not supported")));
        }
        if let Some(idx) = arguments.iter().position(|a| a.contains('\0')) {
            return Err(argument("arguments")(format!("argument {} contains a NUL character", idx + 1)));
        }
        let cwd_path = self.workspace.parse_managed(cwd).map_err(|e| argument("cwd")(error_chain(&e)))?;
        let dir = self
            .roots()
            .resolve_existing(&cwd_path, LinkPolicy::FollowInsideRoots)
            .map_err(|e| argument("cwd")(format!("{}; storage directories are not created", error_chain(&e))))?;
        if !dir.abs.is_dir() {
            return Err(argument("cwd")(format!("`{cwd_path}` is not a directory")));
        }
        call.progress.report_with(0.0, Some(1.0), || format!("Starting {exe_path}"));
        let _serialized = self.lock.lock().await;
        let spec = crate::process::CommandSpec::new(&exe.abs, &dir.abs).args(&arguments).timeout(timeout);
        let (process_id, error) = match self.processes.run(spec, call).await {
            Ok(completed) => (Some(completed.id), failure("the test executable", &completed, Some(timeout))),
            Err(err) => (None, Some(error_chain(&err))),
        };
        call.progress.report(1.0, Some(1.0), error.as_deref().unwrap_or("Completed successfully"));
        Ok(RunTestOutcome { executable: exe_path, arguments, cwd: cwd_path, error, process_id })
    }
}
