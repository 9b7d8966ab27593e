//! One build's record of what its launcher did: prepared before the build (a fresh per-build log
//! named in the build's environment, or a first statistics snapshot), read after it.
//!
//! Architecture invariant: the logs live in the build directory's `CMakeFiles/` (CMake's own
//! scratch directory) and are truncated before each build, so their figures are that build's;
//! a variable the profile sets itself (`CCACHE_STATSLOG`, `DISTCC_LOG`) is never overridden, and
//! then the build has no figures, with the reason.
//! Architecture invariant: statistics snapshots run through `process` with the profile's
//! environment (so an sccache server of the profile's `SCCACHE_SERVER_PORT` is asked).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use super::figures::{self, Acceleration};
use super::{Launcher, farm};
use crate::call::Call;
use crate::cmake::output::failure;
use crate::cmake::profile::Profile;
use crate::cmake::{CmakeService, required_tool};
use crate::process::{CommandSpec, Stream, Timeout};

/// How long a statistics snapshot may take.
const SNAPSHOT_TIMEOUT: Duration = Duration::from_secs(30);

/// What a build needs to say what its launcher did.
pub enum Probe {
    /// `CCACHE_STATSLOG` for this build.
    Ccache { log: PathBuf },
    /// The statistics before the build (or why they could not be read).
    Sccache { tool: PathBuf, before: Result<String, String> },
    /// `DISTCC_LOG` for this build, and the listed hosts.
    Distcc { log: PathBuf, hosts: Vec<String> },
    /// No figures, and why.
    None(Acceleration),
}

impl Probe {
    /// The build command with the variables that make the launcher record this build.
    pub fn apply(&self, spec: CommandSpec) -> CommandSpec {
        match self {
            Probe::Ccache { log } => spec.env("CCACHE_STATSLOG", log),
            Probe::Distcc { log, .. } => spec.env("DISTCC_LOG", log),
            Probe::Sccache { .. } | Probe::None(_) => spec,
        }
    }
}

/// A per-build log in the build directory's `CMakeFiles/`, emptied.
fn fresh_log(build: &Path, launcher: Launcher) -> Result<PathBuf, String> {
    let dir = build.join("CMakeFiles");
    let log = dir.join(format!("forgemcp-{}.log", launcher.name()));
    std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(&log, b""))
        .map_err(|err| format!("its per-build log could not be prepared: {err}"))?;
    Ok(log)
}

impl CmakeService {
    /// Prepares the record of a build of `profile` in `build` (absolute), or `None` without a
    /// launcher.
    pub(in crate::cmake) async fn acceleration_start(
        &self,
        profile: &Profile,
        build: Option<&Path>,
        call: &Call,
    ) -> Option<Probe> {
        let launcher = Launcher::of(profile)?;
        let sets = |name: &str| profile.env.iter().any(|env| env.name == name);
        let own = |name: &str| {
            Probe::None(Acceleration::unknown(
                launcher.name(),
                format!("the profile sets {name} itself, so this build's own figures are not recorded"),
            ))
        };
        let Some(build) = build else {
            return Some(Probe::None(Acceleration::unknown(launcher.name(), "the build directory is not known")));
        };
        let log = |launcher: Launcher, make: &dyn Fn(PathBuf) -> Probe| match fresh_log(build, launcher) {
            Ok(log) => make(log),
            Err(why) => Probe::None(Acceleration::unknown(launcher.name(), why)),
        };
        Some(match launcher {
            Launcher::Ccache if sets("CCACHE_STATSLOG") => own("CCACHE_STATSLOG"),
            Launcher::Ccache => log(launcher, &|log| Probe::Ccache { log }),
            Launcher::Distcc if sets("DISTCC_LOG") => own("DISTCC_LOG"),
            Launcher::Distcc => {
                let hosts =
                    profile.env.iter().find(|env| env.name == "DISTCC_HOSTS").map(|env| farm::distcc_hosts(&env.value));
                let hosts = hosts.unwrap_or_default();
                log(launcher, &|log| Probe::Distcc { log, hosts: hosts.clone() })
            }
            Launcher::Sccache => match required_tool(profile, "sccache", None) {
                Ok(tool) => {
                    let tool = tool.path.clone();
                    let before = self.sccache_stats(profile, &tool, call).await;
                    Probe::Sccache { tool, before }
                }
                Err(why) => Probe::None(Acceleration::unknown("sccache", why)),
            },
            Launcher::Icecc => Probe::None(Acceleration::unknown(
                "icecc",
                "icecream keeps no per-build record its client can be asked for",
            )),
        })
    }

    /// What the launcher did in the build `probe` was prepared for.
    pub(in crate::cmake) async fn acceleration_finish(
        &self,
        profile: &Profile,
        probe: Probe,
        call: &Call,
    ) -> Acceleration {
        let read = |log: &Path| std::fs::read(log).map(|bytes| String::from_utf8_lossy(&bytes).into_owned());
        match probe {
            Probe::Ccache { log } => match read(&log) {
                Ok(text) => figures::ccache_statslog(&text),
                Err(err) => Acceleration::unknown("ccache", format!("its statistics log could not be read: {err}")),
            },
            Probe::Distcc { log, hosts } => match read(&log) {
                Ok(text) => figures::distcc_log(&text, &hosts),
                Err(err) => Acceleration::unknown("distcc", format!("its log could not be read: {err}")),
            },
            Probe::Sccache { tool, before } => {
                let after = self.sccache_stats(profile, &tool, call).await;
                match (before, after) {
                    (Ok(before), Ok(after)) => figures::sccache_delta(&before, &after)
                        .unwrap_or_else(|why| Acceleration::unknown("sccache", why)),
                    (Err(why), _) | (_, Err(why)) => Acceleration::unknown("sccache", why),
                }
            }
            Probe::None(res) => res,
        }
    }

    /// `sccache --show-stats --stats-format=json` with the profile's environment: its stdout.
    async fn sccache_stats(&self, profile: &Profile, tool: &Path, call: &Call) -> Result<String, String> {
        let stdout = Arc::new(Mutex::new(String::new()));
        let sink = stdout.clone();
        let spec = self
            .profile_command(profile, tool, call)
            .await
            .args(["--show-stats", "--stats-format=json"])
            .timeout(Timeout::total(SNAPSHOT_TIMEOUT))
            .on_line(Arc::new(move |stream, line| {
                if stream == Stream::Stdout {
                    sink.lock().push_str(line);
                }
            }));
        let completed =
            self.processes.run(spec, call).await.map_err(|err| format!("its statistics could not be read: {err}"))?;
        if let Some(reason) = failure("sccache --show-stats", &completed, Some(Timeout::total(SNAPSHOT_TIMEOUT))) {
            return Err(format!("its statistics could not be read: {reason}"));
        }
        Ok(std::mem::take(&mut *stdout.lock()))
    }
}
