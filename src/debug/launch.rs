//! Launching the checked program: the DAP handshake (`initialize`, `launch`, breakpoints,
//! `configurationDone`) and the guarantee that the program the adapter starts is the checked file.
//!
//! The adapter opens and starts the program itself, so it is never handed the checked path (which a
//! link swap could redirect between the check and the adapter's open or exec) but
//! [`CheckedExecutable::name`](crate::process::CheckedExecutable::name): on Linux
//! `/proc/<server pid>/fd/<n>`, the descriptor the session holds, which names the checked file and
//! nothing else. Then, before the program may run, its process must execute that very file
//! (`CheckedExecutable::runs_in`: `/proc/<pid>/exe` has its device and inode). lldb-dap starts every
//! program stopped at its exec and lets it run only on `configurationDone`, so a mismatch is found
//! before any instruction of it (its dynamic loader and constructors included) ran; the session then
//! ends with [`Error::NotChecked`]. gdb starts the program only on `configurationDone`; there the
//! check runs once the launch is answered, if gdb named the process.
//!
//! Architecture invariant: nothing the caller sees names the descriptor: the adapter's error messages
//! are shown with the qualified path, and the program's entry in `processes_overview` shows the
//! checked path.

use std::path::Path;
use std::time::Duration;

use serde_json::Map;

use super::Error;
use super::model::Stop;
use super::session::{AdapterKind, LAUNCH_TIMEOUT, REQUEST_TIMEOUT, Session, SessionSpec, Target};
use crate::dap::protocol as dap;
use crate::workspace::path::QualifiedPath;

impl Session {
    /// Initializes the adapter, launches the program, sets the breakpoints and waits for the first
    /// stop or the end.
    pub async fn launch(&self, spec: &SessionSpec, targets: &[Target], wait: Duration) -> Result<Stop, Error> {
        let init = dap::InitializeArguments::forgemcp(spec.kind.tool());
        self.client.request::<dap::Initialize>(&init, LAUNCH_TIMEOUT).await?;
        let mut extra = Map::new();
        if spec.stop_on_entry {
            let member = match spec.kind {
                AdapterKind::LldbDap => "stopOnEntry",
                AdapterKind::Gdb => "stopAtBeginningOfMainSubprogram",
            };
            extra.insert(member.to_owned(), serde_json::Value::Bool(true));
        }
        if !spec.env.is_empty() {
            let env = match spec.kind {
                AdapterKind::LldbDap => serde_json::json!(spec.env),
                AdapterKind::Gdb => serde_json::Value::Object(
                    spec.env
                        .iter()
                        .filter_map(|pair| pair.split_once('='))
                        .map(|(k, v)| (k.to_owned(), serde_json::Value::String(v.to_owned())))
                        .collect(),
                ),
            };
            extra.insert("env".to_owned(), env);
        }
        let name = spec.checked.name();
        let program = name.to_string_lossy().into_owned();
        let failed = |err: &dyn std::fmt::Display| Error::Launch(shown(&err.to_string(), &name, &spec.executable));
        // gdb answers `launch` only after `configurationDone`; lldb-dap before `initialized`.
        let client = self.client.clone();
        let mut launched = match &spec.core {
            Some(core) => {
                let attach = dap::AttachArguments { program, core_file: core.to_string_lossy().into_owned() };
                tokio::spawn(async move { client.request::<dap::Attach>(&attach, LAUNCH_TIMEOUT).await.map(drop) })
            }
            None => {
                let args = spec.arguments.clone();
                let launch =
                    dap::LaunchArguments { program, args, cwd: spec.cwd.to_string_lossy().into_owned(), extra };
                tokio::spawn(async move { client.request::<dap::Launch>(&launch, LAUNCH_TIMEOUT).await.map(drop) })
            }
        };
        let mut initialized = self.initialized();
        let mut launch_result = None;
        let ready = tokio::select! {
            res = initialized.wait_for(|done| *done) => res.is_ok(),
            res = &mut launched => {
                let res = res.map_err(|err| failed(&err))?;
                res.clone().map_err(|err| failed(&err))?;
                launch_result = Some(res);
                false
            }
            () = tokio::time::sleep(LAUNCH_TIMEOUT) => return Err(Error::Launch("the adapter did not get ready".into())),
        };
        if !ready {
            let waited = tokio::time::timeout(LAUNCH_TIMEOUT, initialized.wait_for(|done| *done)).await;
            if !matches!(waited, Ok(Ok(_))) {
                return Err(Error::Launch("the adapter did not get ready".into()));
            }
        }
        if spec.kind == AdapterKind::LldbDap && spec.core.is_none() {
            // The program exists now, stopped at its exec.
            if let Some(res) = &launch_result {
                res.clone().map_err(|err| failed(&err))?;
            } else {
                let res = (&mut launched).await.map_err(|err| failed(&err))?;
                res.clone().map_err(|err| failed(&err))?;
                launch_result = Some(res);
            }
            self.verify_debuggee(spec, true).await?;
        }
        let bound = {
            let mut breakpoints = self.breakpoints.lock().await;
            self.change_breakpoints(&mut breakpoints, targets, &[]).await?;
            targets.iter().filter_map(|t| breakpoints.bound.get(&t.spec()).cloned()).collect()
        };
        self.client.request::<dap::ConfigurationDone>(&Map::new(), REQUEST_TIMEOUT).await?;
        let launch_result = match launch_result {
            Some(res) => res,
            None => launched.await.map_err(|err| failed(&err))?,
        };
        launch_result.map_err(|err| failed(&err))?;
        if spec.kind == AdapterKind::Gdb {
            self.verify_debuggee(spec, false).await?;
        }
        let mut stop = self.wait_and_report(0, wait).await?;
        stop.breakpoints = bound;
        Ok(stop)
    }

    /// Linux: the debuggee must execute the checked file; `required`: the adapter must name its
    /// process (lldb-dap does so while answering `launch`), else only a named process is checked.
    #[cfg(target_os = "linux")]
    async fn verify_debuggee(&self, spec: &SessionSpec, required: bool) -> Result<(), Error> {
        let mut named = self.named_pid();
        let pid = if required {
            match tokio::time::timeout(REQUEST_TIMEOUT, named.wait_for(Option::is_some)).await {
                Ok(Ok(pid)) => *pid,
                _ => None,
            }
        } else {
            *named.borrow()
        };
        let Some(pid) = pid else {
            return match required {
                true => Err(Error::Launch(format!(
                    "the adapter did not name the process of `{}`, so it cannot be checked to run that file",
                    spec.executable
                ))),
                false => Ok(()),
            };
        };
        let ended = match required {
            true => "the session ended before the program ran",
            false => "the session ended",
        };
        match spec.checked.runs_in(pid) {
            Ok(true) => Ok(()),
            Ok(false) | Err(_) => Err(Error::NotChecked { executable: spec.executable.to_string(), ended }),
        }
    }

    /// Elsewhere the adapter is handed the checked path (see `CheckedExecutable::name`).
    #[cfg(not(target_os = "linux"))]
    #[expect(clippy::unused_async, reason = "the Linux version waits for the adapter")]
    async fn verify_debuggee(&self, _spec: &SessionSpec, _required: bool) -> Result<(), Error> {
        Ok(())
    }
}

/// An adapter's message with the descriptor's name replaced by the qualified path.
fn shown(message: &str, name: &Path, executable: &QualifiedPath) -> String {
    message.replace(&*name.to_string_lossy(), &executable.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_qualified_path_not_the_descriptor() {
        let executable = QualifiedPath::parse("project/build/app").unwrap();
        let message = "error: '/proc/42/fd/7' doesn't contain any 'host' platform architectures";
        expect_test::expect![[r#"error: 'project/build/app' doesn't contain any 'host' platform architectures"#]]
            .assert_eq(&shown(message, Path::new("/proc/42/fd/7"), &executable));
    }
}
