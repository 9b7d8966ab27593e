//! CMake profiles: the operator's `--cmake-profile` definitions or the automatic ones, and their
//! resolution against discovered toolsets and the presets the selected CMake lists.
//!
//! Without `--cmake-profile`, a project with `CMakePresets.json` or `CMakeUserPresets.json` gets
//! one profile named `presets` whose preset lists are everything `cmake --list-presets=all` of the
//! `--cmake-toolset` prints; otherwise `Debug` and `Release` plain profiles build in
//! `storage/build/cmake-Debug|Release` with Ninja.
//!
//! Architecture invariant: preset names come only from CMake's own listing; preset files are never
//! parsed here (no inheritance, conditions, macros or associations).
//! Architecture invariant: resolution never falls back: an unknown toolset or a missing preset is an
//! error for that profile, never replaced by another toolset or preset.

use std::sync::Arc;

use super::options::{CmakeProfileSpec, DEFAULT_GENERATOR, PlainProfile, ProfileEnv, ProfileKind};
use crate::toolchain::Toolset;
use crate::workspace::path::{Area, QualifiedPath};

/// The name of the automatic presets profile.
pub const PRESETS_PROFILE: &str = "presets";
/// Preset files whose presence selects the automatic presets profile (project root).
pub const PRESET_FILES: [&str; 2] = ["CMakePresets.json", "CMakeUserPresets.json"];

/// Preset names by kind, as `cmake --list-presets=all` prints them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PresetLists {
    pub configure: Vec<String>,
    pub build: Vec<String>,
    pub test: Vec<String>,
}

/// Reads the output of `cmake --list-presets=all`: sections headed `Available <kind> presets:`,
/// entries indented with the name in double quotes (an optional ` - <display name>` follows).
/// Package and workflow presets are ignored.
pub fn parse_list_presets(output: &str) -> PresetLists {
    let mut res = PresetLists::default();
    let mut section: Option<&mut Vec<String>> = None;
    for line in output.lines() {
        let line = line.trim_end_matches('\r');
        if let Some(kind) = line.strip_prefix("Available ").and_then(|rest| rest.strip_suffix(" presets:")) {
            section = match kind {
                "configure" => Some(&mut res.configure),
                "build" => Some(&mut res.build),
                "test" => Some(&mut res.test),
                _ => None,
            };
            continue;
        }
        if !line.starts_with(char::is_whitespace) {
            if !line.is_empty() {
                section = None;
            }
            continue;
        }
        let Some(list) = section.as_deref_mut() else { continue };
        if let Some(name) = quoted_name(line.trim()) {
            list.push(name.to_owned());
        }
    }
    res
}

/// The name in `"name"   - display` or `"name"`: from the first quote to the last quote that is
/// followed by nothing but spaces or ` - …`.
fn quoted_name(entry: &str) -> Option<&str> {
    let rest = entry.strip_prefix('"')?;
    let end = rest.match_indices('"').map(|(idx, _)| idx).rfind(|&idx| {
        let after = rest[idx + 1..].trim_start();
        after.is_empty() || after.starts_with("- ")
    })?;
    let name = &rest[..end];
    (!name.is_empty()).then_some(name)
}

/// A profile before its toolset and presets are resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Definition {
    pub name: String,
    /// A toolset id or name, matched exactly against the discovered toolsets.
    pub toolset: String,
    pub configuration: Option<String>,
    pub kind: DefinitionKind,
    /// `env=NAME=VALUE`: variables of this profile's configure, build and test runs only.
    pub env: Vec<ProfileEnv>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DefinitionKind {
    Plain(PlainProfile),
    /// Explicit preset lists (checked against the listing).
    Presets(Presets),
    /// The automatic `presets` profile: every listed preset.
    AllPresets,
}

/// A preset profile's settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Presets {
    /// The presets' actual build directory, when the operator named it.
    pub build_directory: Option<QualifiedPath>,
    pub lists: PresetLists,
    /// Presets of the files the automatic profile leaves out: their `condition` (or that of the
    /// configure preset they use) is false on this host.
    pub left_out: PresetLists,
}

impl Presets {
    /// Leaves `left_out` out of the lists and records it.
    pub fn leave_out(&mut self, left_out: PresetLists) {
        self.lists.configure.retain(|name| !left_out.configure.contains(name));
        self.lists.build.retain(|name| !left_out.build.contains(name));
        self.lists.test.retain(|name| !left_out.test.contains(name));
        self.left_out = left_out;
    }
}

impl PresetLists {
    /// The list of one operation's presets.
    pub fn of(&self, operation: Operation) -> &[String] {
        match operation {
            Operation::Configure => &self.configure,
            Operation::Build => &self.build,
            Operation::Test => &self.test,
        }
    }
}

impl Definition {
    /// The operator's `--cmake-profile`.
    pub fn explicit(spec: &CmakeProfileSpec) -> Definition {
        let kind = match &spec.kind {
            ProfileKind::Plain(plain) => DefinitionKind::Plain(plain.clone()),
            ProfileKind::Presets(presets) => DefinitionKind::Presets(Presets {
                build_directory: presets.build_directory.clone(),
                lists: PresetLists {
                    configure: presets.configure_presets.clone(),
                    build: presets.build_presets.clone(),
                    test: presets.test_presets.clone(),
                },
                left_out: PresetLists::default(),
            }),
        };
        Definition {
            name: spec.name.clone(),
            toolset: spec.toolset.clone(),
            configuration: spec.configuration.clone(),
            kind,
            env: spec.env.clone(),
        }
    }

    /// The automatic profiles: `presets` when a preset file exists, else `Debug` and `Release`.
    pub fn automatic(toolset: &str, has_preset_file: bool) -> Vec<Definition> {
        if has_preset_file {
            return vec![Definition {
                name: PRESETS_PROFILE.to_owned(),
                toolset: toolset.to_owned(),
                configuration: None,
                kind: DefinitionKind::AllPresets,
                env: Vec::new(),
            }];
        }
        ["Debug", "Release"]
            .into_iter()
            .map(|configuration| Definition {
                name: configuration.to_owned(),
                toolset: toolset.to_owned(),
                configuration: Some(configuration.to_owned()),
                kind: DefinitionKind::Plain(PlainProfile::new(
                    default_build_directory(configuration),
                    DEFAULT_GENERATOR,
                )),
                env: Vec::new(),
            })
            .collect()
    }

    /// Whether resolving this profile needs the toolset's preset listing.
    pub fn uses_presets(&self) -> bool {
        !matches!(self.kind, DefinitionKind::Plain(_))
    }

    /// Resolves the presets of a preset definition against `listed`; plain definitions pass through.
    pub fn resolve(&self, toolset: Arc<Toolset>, listed: Option<&PresetLists>) -> Result<Profile, String> {
        let kind = match (&self.kind, listed) {
            (DefinitionKind::Plain(plain), _) => Mode::Plain(plain.clone()),
            (DefinitionKind::AllPresets, Some(listed)) => Mode::Presets(Presets {
                build_directory: None,
                lists: listed.clone(),
                left_out: PresetLists::default(),
            }),
            (DefinitionKind::Presets(presets), Some(listed)) => {
                for (kind, chosen, available) in [
                    ("configure", &presets.lists.configure, &listed.configure),
                    ("build", &presets.lists.build, &listed.build),
                    ("test", &presets.lists.test, &listed.test),
                ] {
                    let missing: Vec<&str> =
                        chosen.iter().filter(|p| !available.contains(p)).map(String::as_str).collect();
                    if !missing.is_empty() {
                        return Err(format!(
                            "{kind} preset{} `{}` {} not listed by `cmake --list-presets=all` of toolset `{}`",
                            if missing.len() == 1 { "" } else { "s" },
                            missing.join("`, `"),
                            if missing.len() == 1 { "is" } else { "are" },
                            toolset.id()
                        ));
                    }
                }
                Mode::Presets(presets.clone())
            }
            (DefinitionKind::AllPresets | DefinitionKind::Presets(_), None) => {
                return Err("the presets of this profile could not be listed".to_owned());
            }
        };
        Ok(Profile {
            name: self.name.clone(),
            toolset,
            configuration: self.configuration.clone(),
            mode: kind,
            env: self.env.clone(),
        })
    }
}

/// `storage/build/cmake-<name>` (the name was checked to be one safe directory name).
fn default_build_directory(name: &str) -> QualifiedPath {
    QualifiedPath::area_root(Area::Storage)
        .join_name("build")
        .and_then(|build| build.join_name(&format!("cmake-{name}")))
        .expect("automatic profile names form valid directory names")
}

/// A resolved profile.
#[derive(Debug, Clone)]
pub struct Profile {
    pub name: String,
    pub toolset: Arc<Toolset>,
    pub configuration: Option<String>,
    pub mode: Mode,
    /// `env=NAME=VALUE` of the definition.
    pub env: Vec<ProfileEnv>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    Plain(PlainProfile),
    Presets(Presets),
}

/// One CMake or CTest execution of an operation: a preset, or the profile's build directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Execution {
    /// A plain profile, or a preset profile's ordinary build/test in its `build-directory`.
    Directory(QualifiedPath),
    Preset(String),
}

/// The three operations, for choosing a profile's executions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Configure,
    Build,
    Test,
}

impl Operation {
    pub fn noun(self) -> &'static str {
        match self {
            Operation::Configure => "configure",
            Operation::Build => "build",
            Operation::Test => "test",
        }
    }
}

impl Profile {
    /// The build directory: always known for plain profiles, the operator's for preset profiles.
    pub fn build_directory(&self) -> Option<&QualifiedPath> {
        match &self.mode {
            Mode::Plain(plain) => Some(&plain.build_directory),
            Mode::Presets(presets) => presets.build_directory.as_ref(),
        }
    }

    pub fn generator(&self) -> Option<&str> {
        match &self.mode {
            Mode::Plain(plain) => Some(&plain.generator),
            Mode::Presets(_) => None,
        }
    }

    /// A plain profile's defines as `NAME=value` (the `TYPE` kept in the name when given).
    pub fn defines(&self) -> Vec<String> {
        match &self.mode {
            Mode::Plain(plain) => plain.defines.iter().map(|d| format!("{}={}", d.name, d.value)).collect(),
            Mode::Presets(_) => Vec::new(),
        }
    }

    /// Other settings as `key=value`, in `--cmake-profile` spelling: a plain profile's compilers,
    /// toolchain file, launcher and sanitizers, then every profile's `env=` entries (a secret-looking
    /// variable's value shown as `(set)`).
    pub fn options(&self) -> Vec<String> {
        let env = self.env.iter().map(|env| format!("env={}", env.shown()));
        let Mode::Plain(plain) = &self.mode else { return env.collect() };
        let mut res = Vec::new();
        let tools = [("c-compiler", plain.c_compiler), ("cxx-compiler", plain.cxx_compiler)];
        res.extend(tools.into_iter().filter_map(|(key, spec)| Some(format!("{key}={}", spec?.name))));
        if let Some(file) = &plain.toolchain_file {
            res.push(format!("toolchain-file={file}"));
        }
        if let Some(launcher) = plain.compiler_launcher {
            res.push(format!("compiler-launcher={}", launcher.name));
        }
        if !plain.sanitizers.is_empty() {
            res.push(format!("sanitizers={}", plain.sanitizers.join(",")));
        }
        res.extend(env);
        res
    }

    pub fn presets(&self) -> Option<&PresetLists> {
        match &self.mode {
            Mode::Plain(_) => None,
            Mode::Presets(presets) => Some(&presets.lists),
        }
    }

    /// What `operation` runs for this profile: the plain build directory; each selected preset; or,
    /// for build and test without presets, the operator's build directory.
    pub fn executions(&self, operation: Operation) -> Result<Vec<Execution>, String> {
        let presets = match &self.mode {
            Mode::Plain(plain) => return Ok(vec![Execution::Directory(plain.build_directory.clone())]),
            Mode::Presets(presets) => presets,
        };
        let chosen = presets.lists.of(operation);
        if !chosen.is_empty() {
            return Ok(chosen.iter().cloned().map(Execution::Preset).collect());
        }
        match (&presets.build_directory, operation) {
            (Some(dir), Operation::Build | Operation::Test) => Ok(vec![Execution::Directory(dir.clone())]),
            _ => Err(format!(
                "profile `{}` has no {op} presets{}",
                self.name,
                if operation == Operation::Configure {
                    String::new()
                } else {
                    format!("; add {op}-preset=… or build-directory=… to the profile", op = operation.noun())
                },
                op = operation.noun()
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::toolchain::{SYSTEM_NAME, ToolsetId};

    #[test]
    fn list_presets_of_the_fixture() {
        // Recorded from CMake 3.25 on examples/cpp-acceptance-project.
        let output = r#"Available configure presets:

  "ninja-debug"                - Ninja Debug
  "ninja-debug-negative-tests" - Ninja Debug with intentionally failing tests
  "ninja-llvm-dwarf-debug"     - Ninja Debug with DWARF (Clang only)

Available build presets:

  "build-ninja-debug"

Available test presets:

  "test-ninja-debug"
"#;
        expect![[r#"
            PresetLists {
                configure: [
                    "ninja-debug",
                    "ninja-debug-negative-tests",
                    "ninja-llvm-dwarf-debug",
                ],
                build: [
                    "build-ninja-debug",
                ],
                test: [
                    "test-ninja-debug",
                ],
            }"#]]
        .assert_eq(&format!("{:#?}", parse_list_presets(output)));
    }

    #[test]
    fn list_presets_with_other_sections_and_odd_names() {
        let output = "Available configure presets:\r\n\r\n  \"with \"quotes\" - and dash\" - Display - name\r\n  \"plain\"\r\n\r\n\
                      Available package presets:\r\n\r\n  \"pkg\"\r\n\r\nAvailable workflow presets:\r\n\r\n  \"flow\" - Flow\r\n\r\n\
                      Available test presets:\r\n\r\n  \"t 1\"\r\n\r\nCMake Warning: something\r\n  \"not a preset\"\r\n";
        expect![[r#"
            PresetLists {
                configure: [
                    "with \"quotes\" - and dash",
                    "plain",
                ],
                build: [],
                test: [
                    "t 1",
                ],
            }"#]]
        .assert_eq(&format!("{:#?}", parse_list_presets(output)));
        assert_eq!(parse_list_presets(""), PresetLists::default());
    }

    fn system() -> Arc<Toolset> {
        Arc::new(Toolset::new(ToolsetId::system(), SYSTEM_NAME.to_owned(), Vec::new(), None))
    }

    #[test]
    fn automatic_profiles() {
        let plain = Definition::automatic("system", false);
        let shown: Vec<String> = plain
            .iter()
            .map(|d| match &d.kind {
                DefinitionKind::Plain(p) => {
                    format!("{} {:?} {} {}", d.name, d.configuration, p.build_directory, p.generator)
                }
                _ => unreachable!("plain"),
            })
            .collect();
        expect![[r#"
            Debug Some("Debug") storage/build/cmake-Debug Ninja
            Release Some("Release") storage/build/cmake-Release Ninja"#]]
        .assert_eq(&shown.join("\n"));
        let presets = Definition::automatic("LLVM 20", true);
        assert_eq!(presets.len(), 1);
        assert_eq!((presets[0].name.as_str(), presets[0].toolset.as_str()), ("presets", "LLVM 20"));
        let listed = PresetLists { configure: vec!["a".into(), "b".into()], build: vec!["b".into()], test: vec![] };
        let profile = presets[0].resolve(system(), Some(&listed)).unwrap();
        assert_eq!(profile.presets(), Some(&listed));
        assert_eq!(profile.build_directory(), None);
    }

    #[test]
    fn explicit_presets_must_be_listed() {
        let definition = Definition {
            name: "native".into(),
            toolset: "system".into(),
            configuration: None,
            env: Vec::new(),
            kind: DefinitionKind::Presets(Presets {
                build_directory: None,
                lists: PresetLists {
                    configure: vec!["a".into(), "x".into(), "y".into()],
                    build: vec![],
                    test: vec!["t".into()],
                },
                left_out: PresetLists::default(),
            }),
        };
        let listed = PresetLists { configure: vec!["a".into()], build: vec![], test: vec!["t".into()] };
        expect![[r#"configure presets `x`, `y` are not listed by `cmake --list-presets=all` of toolset `system`"#]]
            .assert_eq(&definition.resolve(system(), Some(&listed)).unwrap_err());
    }

    #[test]
    fn executions_per_operation() {
        let profile = |build_directory: Option<&str>, lists: PresetLists| Profile {
            name: "native".into(),
            toolset: system(),
            configuration: None,
            env: Vec::new(),
            mode: Mode::Presets(Presets {
                build_directory: build_directory.map(|d| QualifiedPath::parse(d).unwrap()),
                lists,
                left_out: PresetLists::default(),
            }),
        };
        let only_configure = PresetLists { configure: vec!["a".into(), "b".into()], ..PresetLists::default() };
        let with_dir = profile(Some("project/build/a"), only_configure.clone());
        let shown = |res: Result<Vec<Execution>, String>| {
            let res = res.map(|executions| {
                let shown: Vec<String> = executions
                    .iter()
                    .map(|e| match e {
                        Execution::Directory(dir) => format!("directory {dir}"),
                        Execution::Preset(preset) => format!("preset {preset}"),
                    })
                    .collect();
                shown.join(", ")
            });
            format!("{res:?}")
        };
        expect![[r#"Ok("preset a, preset b")"#]].assert_eq(&shown(with_dir.executions(Operation::Configure)));
        expect![[r#"Ok("directory project/build/a")"#]].assert_eq(&shown(with_dir.executions(Operation::Test)));
        let without_dir = profile(None, only_configure);
        expect![[
            r#"Err("profile `native` has no build presets; add build-preset=… or build-directory=… to the profile")"#
        ]]
        .assert_eq(&shown(without_dir.executions(Operation::Build)));
        expect![[r#"Err("profile `native` has no configure presets")"#]]
            .assert_eq(&shown(profile(None, PresetLists::default()).executions(Operation::Configure)));
    }
}
