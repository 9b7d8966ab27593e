//! `--cmake-profile NAME KEY=VALUE…` groups: plain or preset profiles with their defaults.

use super::error::{ConfigError, compiler_names};
use crate::cmake::options::{DEFAULT_GENERATOR, SANITIZERS};
use crate::cmake::{CmakeDefine, CmakeProfileSpec, PlainProfile, PresetProfile, ProfileEnv, ProfileKind};
use crate::toolchain::spec::{self, ToolSpec};
use crate::workspace::path::{Area, QualifiedPath, Roots};

/// Profile keys in the order the help and error messages list them.
pub(super) const PROFILE_KEYS: &[&str] = &[
    "toolset",
    "configuration",
    "generator",
    "build-directory",
    "c-compiler",
    "cxx-compiler",
    "toolchain-file",
    "define",
    "compiler-launcher",
    "sanitizers",
    "env",
    "configure-preset",
    "build-preset",
    "test-preset",
];

/// A profile as it is collected, before deciding between plain and preset.
#[derive(Default)]
struct RawProfile {
    toolset: Option<String>,
    configuration: Option<String>,
    generator: Option<String>,
    build_directory: Option<QualifiedPath>,
    c_compiler: Option<&'static ToolSpec>,
    cxx_compiler: Option<&'static ToolSpec>,
    toolchain_file: Option<QualifiedPath>,
    defines: Vec<CmakeDefine>,
    compiler_launcher: Option<&'static ToolSpec>,
    sanitizers: Option<Vec<String>>,
    env: Vec<ProfileEnv>,
    configure_presets: Vec<String>,
    build_presets: Vec<String>,
    test_presets: Vec<String>,
}

pub(super) fn cmake_profiles(
    groups: &[Vec<String>],
    default_toolset: &str,
    roots: &Roots,
) -> Result<Vec<CmakeProfileSpec>, ConfigError> {
    let mut res: Vec<CmakeProfileSpec> = Vec::with_capacity(groups.len());
    for group in groups {
        let Some((name, entries)) = group.split_first() else { continue };
        if name.trim().is_empty() {
            return Err(ConfigError::ProfileName { name: name.clone(), problem: "the name is empty" });
        }
        if name.contains('=') {
            let problem = "the first value is the profile name and must not contain '='";
            return Err(ConfigError::ProfileName { name: name.clone(), problem });
        }
        if res.iter().any(|profile| profile.name == *name) {
            return Err(ConfigError::DuplicateProfile { name: name.clone() });
        }
        res.push(cmake_profile(name, entries, default_toolset, roots)?);
    }
    Ok(res)
}

fn cmake_profile(
    name: &str,
    entries: &[String],
    default_toolset: &str,
    roots: &Roots,
) -> Result<CmakeProfileSpec, ConfigError> {
    let profile = || name.to_owned();
    let mut raw = RawProfile::default();
    for entry in entries {
        let Some((key, value)) = entry.split_once('=') else {
            return Err(ConfigError::ProfileEntry { profile: profile(), entry: entry.clone() });
        };
        if !PROFILE_KEYS.contains(&key) {
            return Err(ConfigError::UnknownProfileKey { profile: profile(), key: key.to_owned() });
        }
        if value.is_empty() {
            return Err(ConfigError::EmptyProfileValue { profile: profile(), key: key.to_owned() });
        }
        let bad_value =
            |problem: String| ConfigError::ProfileValue { profile: profile(), entry: entry.clone(), problem };
        let repeated = || ConfigError::RepeatedProfileKey { profile: profile(), key: key.to_owned() };
        let set_once = |slot: &mut Option<String>| match slot {
            Some(_) => Err(repeated()),
            None => {
                *slot = Some(value.to_owned());
                Ok(())
            }
        };
        match key {
            "toolset" => set_once(&mut raw.toolset)?,
            "configuration" => set_once(&mut raw.configuration)?,
            "generator" => set_once(&mut raw.generator)?,
            "build-directory" | "toolchain-file" => {
                let path = profile_path(value).map_err(bad_value)?;
                let slot = if key == "build-directory" { &mut raw.build_directory } else { &mut raw.toolchain_file };
                if slot.is_some() {
                    return Err(repeated());
                }
                *slot = Some(path);
            }
            "c-compiler" | "cxx-compiler" => {
                let Some(spec) = spec::lookup(value).filter(|spec| spec.is_compiler()) else {
                    return Err(bad_value(format!(
                        "is not a built-in compiler (expected one of {})",
                        compiler_names()
                    )));
                };
                let slot = if key == "c-compiler" { &mut raw.c_compiler } else { &mut raw.cxx_compiler };
                if slot.is_some() {
                    return Err(repeated());
                }
                *slot = Some(spec);
            }
            "define" => {
                let Some((var, var_value)) = value.split_once('=') else {
                    return Err(bad_value("is not define=VAR=value".to_owned()));
                };
                if var.is_empty() {
                    return Err(bad_value("has an empty variable name".to_owned()));
                }
                if raw.defines.iter().any(|define| define.name == var) {
                    return Err(bad_value(format!("defines `{var}` a second time")));
                }
                raw.defines.push(CmakeDefine { name: var.to_owned(), value: var_value.to_owned() });
            }
            "compiler-launcher" => {
                let Some(spec) = spec::lookup(value).filter(|spec| spec.is_launcher()) else {
                    return Err(bad_value(format!(
                        "is not a built-in compiler launcher (expected one of {})",
                        spec::LAUNCHERS.join(", ")
                    )));
                };
                if raw.compiler_launcher.replace(spec).is_some() {
                    return Err(repeated());
                }
            }
            "sanitizers" => {
                let names: Vec<String> = value.split(',').map(|name| name.trim().to_owned()).collect();
                if let Some(bad) = names.iter().find(|name| !SANITIZERS.contains(&name.as_str())) {
                    return Err(bad_value(format!(
                        "names the unknown sanitizer `{bad}` (expected some of {})",
                        SANITIZERS.join(", ")
                    )));
                }
                if let Some((idx, _)) = names.iter().enumerate().find(|(idx, name)| names[..*idx].contains(name)) {
                    return Err(bad_value(format!("names `{}` twice", names[idx])));
                }
                let has = |name: &str| names.iter().any(|n| n == name);
                for (one, other) in [
                    ("address", "thread"),
                    ("address", "memory"),
                    ("thread", "memory"),
                    ("leak", "thread"),
                    ("leak", "memory"),
                ] {
                    if has(one) && has(other) {
                        return Err(bad_value(format!("combines `{one}` and `{other}`, which cannot run together")));
                    }
                }
                if raw.sanitizers.replace(names).is_some() {
                    return Err(repeated());
                }
            }
            "env" => {
                let Some((var, var_value)) = value.split_once('=') else {
                    return Err(bad_value("is not env=NAME=VALUE".to_owned()));
                };
                if var.is_empty() {
                    return Err(bad_value("has an empty variable name".to_owned()));
                }
                if var.contains('\0') || var_value.contains('\0') {
                    return Err(bad_value("contains a NUL character".to_owned()));
                }
                if raw.env.iter().any(|env| env.name == var) {
                    return Err(bad_value(format!("sets `{var}` a second time")));
                }
                raw.env.push(ProfileEnv { name: var.to_owned(), value: var_value.to_owned() });
            }
            "configure-preset" | "build-preset" | "test-preset" => {
                let list = match key {
                    "configure-preset" => &mut raw.configure_presets,
                    "build-preset" => &mut raw.build_presets,
                    _ => &mut raw.test_presets,
                };
                if list.iter().any(|preset| preset == value) {
                    return Err(bad_value("is given more than once".to_owned()));
                }
                list.push(value.to_owned());
            }
            // Unknown keys were refused above, before the empty-value check; keep both lists in sync.
            _ => return Err(ConfigError::UnknownProfileKey { profile: profile(), key: key.to_owned() }),
        }
    }
    let toolset = raw.toolset.take().unwrap_or_else(|| default_toolset.to_owned());
    let configuration = raw.configuration.take();
    let is_preset = !(raw.configure_presets.is_empty() && raw.build_presets.is_empty() && raw.test_presets.is_empty());
    let kind = if is_preset {
        let conflict = [
            ("generator", raw.generator.is_some()),
            ("c-compiler", raw.c_compiler.is_some()),
            ("cxx-compiler", raw.cxx_compiler.is_some()),
            ("toolchain-file", raw.toolchain_file.is_some()),
            ("define", !raw.defines.is_empty()),
            ("compiler-launcher", raw.compiler_launcher.is_some()),
            ("sanitizers", raw.sanitizers.is_some()),
        ]
        .into_iter()
        .find_map(|(key, set)| set.then_some(key));
        if let Some(key) = conflict {
            return Err(ConfigError::PresetConflict { profile: profile(), key: key.to_owned() });
        }
        ProfileKind::Presets(PresetProfile {
            build_directory: raw.build_directory,
            configure_presets: raw.configure_presets,
            build_presets: raw.build_presets,
            test_presets: raw.test_presets,
        })
    } else {
        if let Some(file) = &raw.toolchain_file {
            let exists = roots.lexical(file).is_some_and(|abs| abs.is_file());
            if !exists {
                let entry = format!("toolchain-file={file}");
                return Err(ConfigError::ProfileValue {
                    profile: profile(),
                    entry,
                    problem: "is not an existing file".to_owned(),
                });
            }
        }
        if let (Some(launcher), Some(generator)) = (raw.compiler_launcher, raw.generator.as_deref())
            && ignores_launchers(generator)
        {
            return Err(ConfigError::ProfileValue {
                profile: profile(),
                entry: format!("compiler-launcher={}", launcher.name),
                problem: format!(
                    "cannot be used with generator `{generator}`, which ignores compiler launchers (use Ninja or a Makefiles generator)"
                ),
            });
        }
        let build_directory = match raw.build_directory {
            Some(dir) => dir,
            None => {
                default_build_directory(name).ok_or_else(|| ConfigError::UnsafeProfileDirName { profile: profile() })?
            }
        };
        ProfileKind::Plain(PlainProfile {
            build_directory,
            generator: raw.generator.unwrap_or_else(|| DEFAULT_GENERATOR.to_owned()),
            c_compiler: raw.c_compiler,
            cxx_compiler: raw.cxx_compiler,
            toolchain_file: raw.toolchain_file,
            defines: raw.defines,
            compiler_launcher: raw.compiler_launcher,
            sanitizers: raw.sanitizers.unwrap_or_default(),
        })
    };
    Ok(CmakeProfileSpec { name: name.to_owned(), toolset, configuration, kind, env: raw.env })
}

/// Generators that build through the IDE's own tool and ignore `CMAKE_<LANG>_COMPILER_LAUNCHER`.
fn ignores_launchers(generator: &str) -> bool {
    generator.starts_with("Visual Studio") || generator == "Xcode"
}

/// A `build-directory` or `toolchain-file` value: a workspace path in project/ or storage/, below
/// the area root.
fn profile_path(value: &str) -> Result<QualifiedPath, String> {
    let path = QualifiedPath::parse(value).map_err(|err| format!("is not a workspace path: {err}"))?;
    match path.area() {
        Area::Root => Err("must be in project/ or storage/, not root/".to_owned()),
        Area::Project | Area::Storage if path.is_area_root() => {
            Err(format!("must name a directory or file below {path}, not the root itself"))
        }
        Area::Project | Area::Storage => Ok(path),
    }
}

/// `storage/build/cmake-<name>`, when the name is a single safe directory name on every platform.
fn default_build_directory(name: &str) -> Option<QualifiedPath> {
    let safe = name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '+'))
        // Windows drops trailing dots, so `cmake-a.` and `cmake-a` would be the same directory.
        && !name.ends_with('.');
    if !safe {
        return None;
    }
    QualifiedPath::area_root(Area::Storage).join_name("build")?.join_name(&format!("cmake-{name}"))
}
