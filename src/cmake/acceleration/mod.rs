//! Compiler caches and build farms around a profile's runs: the environment of its configure,
//! build and test commands (the profile's `env=` entries and the launcher's defaults), and the
//! parallelism of a build through a farm.
//!
//! Architecture invariant: a profile's variables reach only the commands of that profile's
//! configure, build and test runs ([`CmakeService::profile_command`]); nothing here reads the
//! server's own environment (that is `config/`'s job), so defaults depend only on the profile.
//! Architecture invariant: a default never overrides a variable the profile sets.

pub mod farm;
pub mod figures;
pub mod probe;

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};

use parking_lot::Mutex;

use super::profile::{Mode, Profile};
use super::{CmakeService, required_tool};
use crate::call::Call;
use crate::process::{CommandSpec, Stream, Timeout};
use crate::toolchain::tool_command;

/// Whether an sccache executable knows `SCCACHE_BASEDIRS` (0.14 and later), by path: its version
/// is asked once per server lifetime.
static SCCACHE_BASEDIRS: LazyLock<Mutex<HashMap<PathBuf, bool>>> = LazyLock::new(|| Mutex::new(HashMap::new()));

/// Whether `sccache --version` output (`sccache 0.14.0`) names a release that knows
/// `SCCACHE_BASEDIRS`.
pub fn sccache_knows_basedirs(version: &str) -> bool {
    let number = version.split_whitespace().nth(1).unwrap_or_default();
    let mut parts = number.split(['.', '-']).map(|part| part.parse::<u32>().ok());
    match (parts.next().flatten(), parts.next().flatten()) {
        (Some(major), Some(minor)) => (major, minor) >= (0, 14),
        _ => false,
    }
}

/// A built-in compiler launcher (`compiler-launcher=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Launcher {
    Ccache,
    Sccache,
    Distcc,
    Icecc,
}

impl Launcher {
    /// The launcher of a built-in tool name (`toolchain::spec::LAUNCHERS`).
    pub fn from_name(name: &str) -> Option<Launcher> {
        match name {
            "ccache" => Some(Launcher::Ccache),
            "sccache" => Some(Launcher::Sccache),
            "distcc" => Some(Launcher::Distcc),
            "icecc" => Some(Launcher::Icecc),
            _ => None,
        }
    }

    /// A plain profile's `compiler-launcher=` (preset profiles set theirs in the preset).
    pub fn of(profile: &Profile) -> Option<Launcher> {
        match &profile.mode {
            Mode::Plain(plain) => plain.compiler_launcher.and_then(|spec| Launcher::from_name(spec.name)),
            Mode::Presets(_) => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Launcher::Ccache => "ccache",
            Launcher::Sccache => "sccache",
            Launcher::Distcc => "distcc",
            Launcher::Icecc => "icecc",
        }
    }

    /// A cache (whose results MSVC can store only with embedded debug information), not a farm.
    pub fn is_cache(self) -> bool {
        matches!(self, Launcher::Ccache | Launcher::Sccache)
    }
}

/// The variables of a profile's runs: the launcher's defaults for what the profile leaves unset,
/// then the profile's own `env=` entries. `project` is the absolute project root.
///
/// ccache: `CCACHE_BASEDIR` (the project root, so paths below it are hashed relative to the working
/// directory) and `CCACHE_NOHASHDIR=1` (the working directory is not hashed), so two copies or
/// worktrees of one project share hits. sccache: `SCCACHE_BASEDIRS` (the project root) when
/// `sccache_basedirs` says the installed sccache knows it (0.14 and later).
pub fn run_environment(profile: &Profile, project: &Path, sccache_basedirs: bool) -> Vec<(OsString, OsString)> {
    let sets = |name: &str| profile.env.iter().any(|env| env.name == name);
    let mut res: Vec<(OsString, OsString)> = Vec::new();
    let mut default = |name: &str, value: OsString| {
        if !sets(name) {
            res.push((name.into(), value));
        }
    };
    match Launcher::of(profile) {
        Some(Launcher::Ccache) => {
            default("CCACHE_BASEDIR", project.as_os_str().to_owned());
            default("CCACHE_NOHASHDIR", "1".into());
        }
        Some(Launcher::Sccache) if sccache_basedirs => default("SCCACHE_BASEDIRS", project.as_os_str().to_owned()),
        _ => {}
    }
    res.extend(profile.env.iter().map(|env| (OsString::from(&env.name), OsString::from(&env.value))));
    res
}

/// Whether a plain profile's configure sets `CMAKE_MSVC_DEBUG_INFORMATION_FORMAT=Embedded`: an MSVC
/// compiler (`msvc`) behind a caching launcher, since caches cannot store separate PDB files.
pub fn embeds_debug_information(profile: &Profile, msvc: bool) -> bool {
    msvc && Launcher::of(profile).is_some_and(Launcher::is_cache)
}

impl CmakeService {
    /// A command of `profile`'s configure, build or test run: the toolset's environment, then the
    /// profile's ([`run_environment`]), in the project root.
    pub(super) async fn profile_command(&self, profile: &Profile, executable: &Path, call: &Call) -> CommandSpec {
        let basedirs = Launcher::of(profile) == Some(Launcher::Sccache) && self.sccache_basedirs(profile, call).await;
        let project = self.roots().project();
        let env = run_environment(profile, project, basedirs);
        env.into_iter()
            .fold(tool_command(&profile.toolset, executable, project), |spec, (name, value)| spec.env(name, value))
    }

    /// Whether the profile's sccache knows `SCCACHE_BASEDIRS` (asked once per executable; an
    /// sccache that cannot say is taken not to).
    async fn sccache_basedirs(&self, profile: &Profile, call: &Call) -> bool {
        let Ok(tool) = required_tool(profile, "sccache", None) else { return false };
        if let Some(known) = SCCACHE_BASEDIRS.lock().get(&tool.path) {
            return *known;
        }
        let stdout = Arc::new(Mutex::new(String::new()));
        let sink = stdout.clone();
        let spec = tool_command(&profile.toolset, &tool.path, self.roots().project())
            .arg("--version")
            .timeout(Timeout::total(std::time::Duration::from_secs(10)))
            .on_line(Arc::new(move |stream, line| {
                if stream == Stream::Stdout {
                    sink.lock().push_str(line);
                }
            }));
        let Ok(completed) = self.processes.run(spec, call).await else { return false };
        let knows = completed.succeeded() && sccache_knows_basedirs(&stdout.lock());
        SCCACHE_BASEDIRS.lock().insert(tool.path.clone(), knows);
        knows
    }

    /// The `--parallel` of a build when the request gives none: a farm's slots for distcc and
    /// icecc ([`farm::slots`]), else CMake's default.
    pub(super) fn farm_parallel(&self, profile: &Profile) -> Option<u32> {
        farm::slots(Launcher::of(profile)?, &profile.env)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::cmake::options::{PlainProfile, ProfileEnv};
    use crate::toolchain::{SYSTEM_NAME, Toolset, ToolsetId, spec};
    use crate::workspace::path::QualifiedPath;

    pub(super) fn profile(launcher: Option<&str>, env: &[(&str, &str)]) -> Profile {
        let mut plain = PlainProfile::new(QualifiedPath::parse("storage/build/cmake-p").unwrap(), "Ninja");
        plain.compiler_launcher = launcher.map(|name| spec::lookup(name).unwrap());
        Profile {
            name: "p".into(),
            toolset: Arc::new(Toolset::new(ToolsetId::system(), SYSTEM_NAME.to_owned(), Vec::new(), None)),
            configuration: None,
            mode: Mode::Plain(plain),
            env: env.iter().map(|(n, v)| ProfileEnv { name: (*n).into(), value: (*v).into() }).collect(),
        }
    }

    fn shown(env: Vec<(OsString, OsString)>) -> Vec<String> {
        env.into_iter().map(|(n, v)| format!("{}={}", n.to_string_lossy(), v.to_string_lossy())).collect()
    }

    #[test]
    fn ccache_shares_hits_across_copies_unless_the_profile_says_otherwise() {
        let root = Path::new("/w/proj");
        let env = run_environment(&profile(Some("ccache"), &[("A", "1")]), root, false);
        assert_eq!(shown(env), ["CCACHE_BASEDIR=/w/proj", "CCACHE_NOHASHDIR=1", "A=1"]);
        let own = profile(Some("ccache"), &[("CCACHE_BASEDIR", "/w"), ("CCACHE_NOHASHDIR", "")]);
        assert_eq!(shown(run_environment(&own, root, false)), ["CCACHE_BASEDIR=/w", "CCACHE_NOHASHDIR="]);
    }

    #[test]
    fn sccache_base_directories_only_where_sccache_knows_them() {
        let root = Path::new("/w/proj");
        assert!(run_environment(&profile(Some("sccache"), &[]), root, false).is_empty());
        assert_eq!(shown(run_environment(&profile(Some("sccache"), &[]), root, true)), ["SCCACHE_BASEDIRS=/w/proj"]);
        assert_eq!(shown(run_environment(&profile(None, &[("X", "y")]), root, true)), ["X=y"]);
    }

    #[test]
    fn sccache_versions_with_base_directories() {
        assert!(!sccache_knows_basedirs("sccache 0.4.0-pre.6"));
        assert!(!sccache_knows_basedirs("sccache 0.13.0"));
        assert!(sccache_knows_basedirs("sccache 0.14.0"));
        assert!(sccache_knows_basedirs("sccache 1.0.0"));
        assert!(!sccache_knows_basedirs("sccache"));
    }

    #[test]
    fn only_caches_embed_msvc_debug_information() {
        assert!(embeds_debug_information(&profile(Some("sccache"), &[]), true));
        assert!(embeds_debug_information(&profile(Some("ccache"), &[]), true));
        assert!(!embeds_debug_information(&profile(Some("ccache"), &[]), false));
        assert!(!embeds_debug_information(&profile(Some("distcc"), &[]), true));
        assert!(!embeds_debug_information(&profile(None, &[]), true));
    }
}
