//! What the CMake service is given: `--cmake-toolset` and the operator's `--cmake-profile`s, as
//! validated values.
//!
//! `config` parses and validates the command line and builds these; tests build them directly.
//!
//! Architecture invariant: this module reads nothing and knows nothing about the command line; a
//! [`CmakeProfileSpec`] holds what was already validated (unique names, known keys, workspace paths
//! below an area root, an existing toolchain file at startup).

use crate::toolchain::spec::ToolSpec;
use crate::workspace::path::QualifiedPath;

/// The toolset of automatic CMake profiles when `--cmake-toolset` is not given.
pub const DEFAULT_CMAKE_TOOLSET: &str = "system";
/// The generator of plain CMake profiles that do not name one.
pub const DEFAULT_GENERATOR: &str = "Ninja";

/// The CMake settings of a server: `--cmake-toolset` and the `--cmake-profile`s.
#[derive(Debug, Clone)]
pub struct CmakeOptions {
    pub toolset: String,
    /// Explicit profiles; empty means the automatic ones.
    pub profiles: Vec<CmakeProfileSpec>,
}

impl Default for CmakeOptions {
    fn default() -> CmakeOptions {
        CmakeOptions { toolset: DEFAULT_CMAKE_TOOLSET.to_owned(), profiles: Vec::new() }
    }
}

/// One `--cmake-profile NAME KEY=VALUE…`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CmakeProfileSpec {
    /// Non-empty, no `=`, unique among profiles.
    pub name: String,
    /// `toolset=`, or `--cmake-toolset` when absent; matched by id or name after discovery.
    pub toolset: String,
    /// `configuration=` (for example `Debug`).
    pub configuration: Option<String>,
    pub kind: ProfileKind,
    /// `env=NAME=VALUE` in command-line order; `NAME` is unique and non-empty, without `=`.
    pub env: Vec<ProfileEnv>,
}

impl CmakeProfileSpec {
    /// The build directory: always known for plain profiles, optional for preset profiles.
    pub fn build_directory(&self) -> Option<&QualifiedPath> {
        match &self.kind {
            ProfileKind::Plain(plain) => Some(&plain.build_directory),
            ProfileKind::Presets(presets) => presets.build_directory.as_ref(),
        }
    }
}

/// Whether a profile configures by itself or delegates to CMake presets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProfileKind {
    Plain(PlainProfile),
    Presets(PresetProfile),
}

/// A profile without preset keys.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PlainProfile {
    /// `build-directory=` in project/ or storage/ (never the area root itself), or
    /// `storage/build/cmake-<name>`.
    pub build_directory: QualifiedPath,
    /// `generator=`, or [`DEFAULT_GENERATOR`].
    pub generator: String,
    /// `c-compiler=`: a built-in compiler tool, looked up in the profile's toolset later.
    pub c_compiler: Option<&'static ToolSpec>,
    /// `cxx-compiler=`: a built-in compiler tool, looked up in the profile's toolset later.
    pub cxx_compiler: Option<&'static ToolSpec>,
    /// `toolchain-file=` in project/ or storage/; it was an existing file at startup.
    pub toolchain_file: Option<QualifiedPath>,
    /// `define=VAR=value` in command-line order; `VAR` is unique and non-empty.
    pub defines: Vec<CmakeDefine>,
    /// `compiler-launcher=`: a built-in launcher (`ccache`, `sccache`, `distcc`, `icecc`), looked up
    /// in the profile's toolset later.
    pub compiler_launcher: Option<&'static ToolSpec>,
    /// `sanitizers=address,undefined`: unique names of [`SANITIZERS`], in the given order.
    pub sanitizers: Vec<String>,
}

impl PlainProfile {
    /// A profile in `build_directory` with `generator` and no other option.
    pub fn new(build_directory: QualifiedPath, generator: impl Into<String>) -> PlainProfile {
        PlainProfile {
            build_directory,
            generator: generator.into(),
            c_compiler: None,
            cxx_compiler: None,
            toolchain_file: None,
            defines: Vec::new(),
            compiler_launcher: None,
            sanitizers: Vec::new(),
        }
    }
}

/// The sanitizers `sanitizers=` accepts.
pub const SANITIZERS: [&str; 5] = ["address", "undefined", "thread", "leak", "memory"];

/// A profile with at least one preset key. It never sets generator, compilers, toolchain file or
/// defines.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PresetProfile {
    /// `build-directory=`: the configure preset's actual build directory, for ordinary build and
    /// test commands when the matching presets are absent.
    pub build_directory: Option<QualifiedPath>,
    pub configure_presets: Vec<String>,
    pub build_presets: Vec<String>,
    pub test_presets: Vec<String>,
}

/// One `env=NAME=VALUE`: a variable of this profile's configure, build and test runs only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileEnv {
    pub name: String,
    pub value: String,
}

/// Parts of variable names whose values are not shown (compared in upper case).
const SECRET_PARTS: [&str; 4] = ["TOKEN", "KEY", "SECRET", "PASSWORD"];

impl ProfileEnv {
    /// Whether the name looks secret (`*TOKEN*`, `*KEY*`, `*SECRET*`, `*PASSWORD*`, any case).
    pub fn is_secret(&self) -> bool {
        let upper = self.name.to_ascii_uppercase();
        SECRET_PARTS.iter().any(|part| upper.contains(part))
    }

    /// `NAME=VALUE` for settings shown to people; a secret-looking name shows `NAME=(set)`.
    pub fn shown(&self) -> String {
        if self.is_secret() { format!("{}=(set)", self.name) } else { format!("{}={}", self.name, self.value) }
    }
}

/// One `define=VAR=value` (a `-DVAR=value` cache entry; `VAR` may carry a `:TYPE`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CmakeDefine {
    pub name: String,
    pub value: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(kind: ProfileKind) -> CmakeProfileSpec {
        CmakeProfileSpec {
            name: "p".to_owned(),
            toolset: DEFAULT_CMAKE_TOOLSET.to_owned(),
            configuration: None,
            kind,
            env: Vec::new(),
        }
    }

    fn qp(text: &str) -> QualifiedPath {
        QualifiedPath::parse(text).expect("workspace path")
    }

    #[test]
    fn build_directory_is_known_for_plain_profiles_and_optional_for_presets() {
        let plain = PlainProfile::new(qp("storage/build/cmake-p"), DEFAULT_GENERATOR);
        assert_eq!(spec(ProfileKind::Plain(plain)).build_directory(), Some(&qp("storage/build/cmake-p")));
        let presets = |build_directory| PresetProfile {
            build_directory,
            configure_presets: vec!["dev".to_owned()],
            build_presets: Vec::new(),
            test_presets: Vec::new(),
        };
        assert_eq!(spec(ProfileKind::Presets(presets(None))).build_directory(), None);
        let given = Some(qp("project/out"));
        assert_eq!(spec(ProfileKind::Presets(presets(given))).build_directory(), Some(&qp("project/out")));
    }

    #[test]
    fn secret_looking_values_are_shown_as_set() {
        let env = |name: &str| ProfileEnv { name: name.to_owned(), value: "v".to_owned() };
        let shown: Vec<String> =
            ["DISTCC_HOSTS", "CCACHE_REMOTE_STORAGE", "api_token", "SSH_KEY_FILE", "MySecret", "DB_PASSWORD"]
                .into_iter()
                .map(|name| env(name).shown())
                .collect();
        assert_eq!(
            shown,
            [
                "DISTCC_HOSTS=v",
                "CCACHE_REMOTE_STORAGE=v",
                "api_token=(set)",
                "SSH_KEY_FILE=(set)",
                "MySecret=(set)",
                "DB_PASSWORD=(set)"
            ]
        );
    }
}
