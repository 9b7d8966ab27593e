//! What the preset files say that `cmake --list-presets=all` does not: which configure preset a
//! build or test preset uses, whether a configure preset sets `CMAKE_EXPORT_COMPILE_COMMANDS`, and
//! which presets exist at all (so that those CMake leaves out of its listing, because their
//! `condition` is false on this host, can be named).
//!
//! Reads `CMakePresets.json` and `CMakeUserPresets.json` of the project root and the files they
//! `include` (relative to the including file), and follows `inherits` (earlier parents win, the
//! preset's own values win over all). Macros, conditions and environment are not evaluated: the
//! listing stays the authority on which presets are enabled.
//!
//! Architecture invariant: the names of the presets that run still come from CMake's listing; a
//! preset file that cannot be read or parsed contributes nothing (CMake reports it when it runs).

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::profile::{PRESET_FILES, PresetLists};
use crate::workspace::path::{QualifiedPath, Roots};

/// The most `include` and `inherits` levels followed (cycles are CMake's error).
const MAX_DEPTH: usize = 32;

/// One preset as its file has it.
#[derive(Debug, Clone, Default, PartialEq)]
struct Preset {
    hidden: bool,
    inherits: Vec<String>,
    configure_preset: Option<String>,
    binary_dir: Option<String>,
    cache_variables: serde_json::Map<String, Value>,
}

/// The presets of the project's preset files, by kind and name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PresetFiles {
    configure: BTreeMap<String, Preset>,
    build: BTreeMap<String, Preset>,
    test: BTreeMap<String, Preset>,
}

/// What a configure preset does with `CMAKE_EXPORT_COMPILE_COMMANDS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Export {
    Unset,
    On,
    Off,
}

impl PresetFiles {
    /// Reads the preset files of `project` (missing or unreadable files contribute nothing).
    pub fn read(project: &Path) -> PresetFiles {
        let mut res = PresetFiles::default();
        let mut seen = HashSet::new();
        for name in PRESET_FILES {
            res.add_file(&project.join(name), &mut seen, 0);
        }
        res
    }

    fn add_file(&mut self, path: &Path, seen: &mut HashSet<PathBuf>, depth: usize) {
        if depth > MAX_DEPTH || !seen.insert(path.to_path_buf()) {
            return;
        }
        let Ok(text) = std::fs::read_to_string(path) else { return };
        let Ok(value) = serde_json::from_str::<Value>(&text) else { return };
        self.add(&value);
        let dir = path.parent().unwrap_or(Path::new(""));
        for include in value.get("include").and_then(Value::as_array).into_iter().flatten() {
            if let Some(include) = include.as_str() {
                self.add_file(&dir.join(include), seen, depth + 1);
            }
        }
    }

    /// Adds the presets of one parsed file (the first definition of a name is kept).
    pub fn add(&mut self, file: &Value) {
        for (key, map) in [
            ("configurePresets", &mut self.configure),
            ("buildPresets", &mut self.build),
            ("testPresets", &mut self.test),
        ] {
            for preset in file.get(key).and_then(Value::as_array).into_iter().flatten() {
                let Some(name) = preset.get("name").and_then(Value::as_str) else { continue };
                let inherits = match preset.get("inherits") {
                    Some(Value::String(one)) => vec![one.clone()],
                    Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
                    _ => Vec::new(),
                };
                map.entry(name.to_owned()).or_insert(Preset {
                    hidden: preset.get("hidden").and_then(Value::as_bool).unwrap_or(false),
                    inherits,
                    configure_preset: preset.get("configurePreset").and_then(Value::as_str).map(str::to_owned),
                    binary_dir: preset.get("binaryDir").and_then(Value::as_str).map(str::to_owned),
                    cache_variables: preset
                        .get("cacheVariables")
                        .and_then(Value::as_object)
                        .cloned()
                        .unwrap_or_default(),
                });
            }
        }
    }

    /// The first value `get` finds on `name` or its ancestors (own values first, then each parent
    /// in order, depth first).
    fn inherited<'a, T>(
        map: &'a BTreeMap<String, Preset>,
        name: &str,
        depth: usize,
        get: &dyn Fn(&'a Preset) -> Option<T>,
    ) -> Option<T> {
        let preset = map.get(name)?;
        if let Some(found) = get(preset) {
            return Some(found);
        }
        if depth >= MAX_DEPTH {
            return None;
        }
        preset.inherits.iter().find_map(|parent| Self::inherited(map, parent, depth + 1, get))
    }

    /// The configure preset a build (`test: false`) or test preset uses.
    pub fn configure_preset_of(&self, preset: &str, test: bool) -> Option<&str> {
        let map = if test { &self.test } else { &self.build };
        Self::inherited(map, preset, 0, &|p: &Preset| p.configure_preset.as_deref())
    }

    /// The visible configure presets of the files, by name.
    pub fn configure_presets(&self) -> Vec<String> {
        self.configure.iter().filter(|(_, p)| !p.hidden).map(|(name, _)| name.clone()).collect()
    }

    /// Where a configure preset of the project at `project` builds: its (inherited) `binaryDir`
    /// with `${sourceDir}`, `${sourceParentDir}`, `${sourceDirName}`, `${presetName}` and `${dollar}`
    /// expanded, relative to the source directory; `None` without one or with any other macro
    /// (environment, generator, host), which only CMake evaluates.
    pub fn binary_dir(&self, preset: &str, project: &Path) -> Option<PathBuf> {
        let dir = Self::inherited(&self.configure, preset, 0, &|p: &Preset| p.binary_dir.as_deref())?;
        let source = project.to_string_lossy();
        let parent = project.parent().map(|parent| parent.to_string_lossy()).unwrap_or_default();
        let name = project.file_name().map(|name| name.to_string_lossy()).unwrap_or_default();
        let expanded = dir
            .replace("${sourceDir}", &source)
            .replace("${sourceParentDir}", &parent)
            .replace("${sourceDirName}", &name)
            .replace("${presetName}", preset)
            .replace("${dollar}", "\u{1}");
        if expanded.contains('$') {
            return None;
        }
        let expanded = expanded.replace("\u{1}", "$");
        Some(crate::workspace::path::lexically_normal(&project.join(expanded)))
    }

    /// [`Self::binary_dir`] as a qualified path of the workspace (`None` outside its roots).
    pub fn qualified_binary_dir(&self, preset: &str, roots: &Roots) -> Option<QualifiedPath> {
        roots.qualify(&self.binary_dir(preset, roots.project())?)
    }

    /// Whether a configure preset sets `CMAKE_EXPORT_COMPILE_COMMANDS`, and how.
    pub fn export_compile_commands(&self, preset: &str) -> Export {
        let value = Self::inherited(&self.configure, preset, 0, &|p: &Preset| {
            p.cache_variables.get("CMAKE_EXPORT_COMPILE_COMMANDS")
        });
        let text = match value {
            None | Some(Value::Null) => return Export::Unset,
            Some(Value::Bool(on)) => return if *on { Export::On } else { Export::Off },
            Some(Value::String(text)) => text.as_str(),
            Some(Value::Object(object)) => match object.get("value") {
                Some(Value::String(text)) => text.as_str(),
                Some(Value::Bool(on)) => return if *on { Export::On } else { Export::Off },
                _ => return Export::Unset,
            },
            Some(_) => return Export::Unset,
        };
        if is_cmake_false(text) { Export::Off } else { Export::On }
    }

    /// The `CMAKE_BUILD_TYPE` a configure preset sets (itself or through `inherits`), when it sets
    /// a non-empty one.
    pub fn build_type(&self, preset: &str) -> Option<String> {
        let value =
            Self::inherited(&self.configure, preset, 0, &|p: &Preset| p.cache_variables.get("CMAKE_BUILD_TYPE"))?;
        let text = match value {
            Value::String(text) => text.as_str(),
            Value::Object(object) => object.get("value")?.as_str()?,
            _ => return None,
        };
        (!text.is_empty()).then(|| text.to_owned())
    }

    /// The visible presets of the files that `listed` (CMake's listing) leaves out, and the build
    /// and test presets whose configure preset it leaves out: their `condition` is false on this
    /// host (or that of a preset they use).
    pub fn left_out(&self, listed: &PresetLists) -> PresetLists {
        let visible = |map: &BTreeMap<String, Preset>| -> Vec<String> {
            map.iter().filter(|(_, p)| !p.hidden).map(|(name, _)| name.clone()).collect()
        };
        let configure: Vec<String> =
            visible(&self.configure).into_iter().filter(|name| !listed.configure.contains(name)).collect();
        let dependent = |names: Vec<String>, shown: &[String], test: bool| -> Vec<String> {
            names
                .into_iter()
                .filter(|name| {
                    !shown.contains(name)
                        || self.configure_preset_of(name, test).is_some_and(|c| configure.iter().any(|l| l == c))
                })
                .collect()
        };
        let build = dependent(visible(&self.build), &listed.build, false);
        let test = dependent(visible(&self.test), &listed.test, true);
        PresetLists { configure, build, test }
    }
}

/// CMake's false constants (`if(<constant>)`): `0`, `OFF`, `NO`, `FALSE`, `N`, `IGNORE`,
/// `NOTFOUND`, the empty string and anything ending in `-NOTFOUND`, case-insensitively.
fn is_cmake_false(text: &str) -> bool {
    let upper = text.trim().to_ascii_uppercase();
    matches!(upper.as_str(), "" | "0" | "OFF" | "NO" | "FALSE" | "N" | "IGNORE" | "NOTFOUND")
        || upper.ends_with("-NOTFOUND")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GSL's shape: hidden bases, a Windows-only base with a condition, build and test presets
    /// naming configure presets.
    fn gsl() -> PresetFiles {
        let mut files = PresetFiles::default();
        files.add(&serde_json::json!({
            "version": 3,
            "configurePresets": [
                { "name": "base", "hidden": true, "generator": "Ninja",
                  "cacheVariables": { "GSL_TEST": "ON" } },
                { "name": "msvc-base", "inherits": "base", "hidden": true,
                  "condition": { "type": "equals", "lhs": "${hostSystemName}", "rhs": "Windows" } },
                { "name": "msvc-debug", "inherits": "msvc-base" },
                { "name": "gcc-debug", "inherits": ["base"] },
                { "name": "quiet", "inherits": "base",
                  "cacheVariables": { "CMAKE_EXPORT_COMPILE_COMMANDS": { "type": "BOOL", "value": "OFF" } } },
                { "name": "loud", "inherits": "quiet", "cacheVariables": { "CMAKE_EXPORT_COMPILE_COMMANDS": true } }
            ],
            "buildPresets": [
                { "name": "msvc-debug", "configurePreset": "msvc-debug" },
                { "name": "gcc-debug", "configurePreset": "gcc-debug" }
            ],
            "testPresets": [
                { "name": "test-base", "hidden": true, "configurePreset": "msvc-debug" },
                { "name": "msvc-debug", "inherits": "test-base" },
                { "name": "gcc-debug", "configurePreset": "gcc-debug" }
            ]
        }));
        files
    }

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|n| (*n).to_owned()).collect()
    }

    #[test]
    fn build_types_come_through_inherits_in_either_form() {
        let mut files = PresetFiles::default();
        files.add(&serde_json::json!({
            "version": 3,
            "configurePresets": [
                { "name": "base", "hidden": true, "cacheVariables": { "CMAKE_BUILD_TYPE": "Debug" } },
                { "name": "dbg", "inherits": "base" },
                { "name": "rel", "inherits": "base",
                  "cacheVariables": { "CMAKE_BUILD_TYPE": { "type": "STRING", "value": "Release" } } },
                { "name": "none", "cacheVariables": { "CMAKE_BUILD_TYPE": "" } }
            ],
            "testPresets": [{ "name": "rel-tests", "configurePreset": "rel" }]
        }));
        assert_eq!(files.build_type("dbg").as_deref(), Some("Debug"));
        assert_eq!(files.build_type("rel").as_deref(), Some("Release"));
        assert_eq!(files.build_type(files.configure_preset_of("rel-tests", true).unwrap()).as_deref(), Some("Release"));
        assert_eq!(files.build_type("none"), None);
        assert_eq!(gsl().build_type("gcc-debug"), None);
    }

    #[test]
    fn presets_left_out_by_their_condition() {
        // What CMake 3.25 lists on Linux: the false-condition configure preset is left out, the
        // build and test presets that use it are not.
        let listed = PresetLists {
            configure: names(&["gcc-debug", "quiet", "loud"]),
            build: names(&["msvc-debug", "gcc-debug"]),
            test: names(&["msvc-debug", "gcc-debug"]),
        };
        let left_out = gsl().left_out(&listed);
        assert_eq!(
            left_out,
            PresetLists {
                configure: names(&["msvc-debug"]),
                build: names(&["msvc-debug"]),
                test: names(&["msvc-debug"])
            }
        );
        assert_eq!(gsl().configure_preset_of("msvc-debug", true), Some("msvc-debug"), "inherited");
    }

    #[test]
    fn binary_dirs_with_the_source_macros() {
        let mut files = gsl();
        files.add(&serde_json::json!({ "configurePresets": [
            { "name": "with-dir", "binaryDir": "${sourceDir}/build/${presetName}" },
            { "name": "child", "inherits": "with-dir" },
            { "name": "relative", "binaryDir": "out/x${dollar}" },
            { "name": "env", "binaryDir": "$env{HOME}/b" }
        ]}));
        let project = Path::new("/w/proj");
        assert_eq!(files.binary_dir("with-dir", project), Some(PathBuf::from("/w/proj/build/with-dir")));
        assert_eq!(files.binary_dir("child", project), Some(PathBuf::from("/w/proj/build/child")), "inherited");
        assert_eq!(files.binary_dir("relative", project), Some(PathBuf::from("/w/proj/out/x$")));
        assert_eq!(files.binary_dir("env", project), None, "only CMake evaluates the environment");
        assert_eq!(files.binary_dir("gcc-debug", project), None, "no binaryDir");
        assert!(files.configure_presets().contains(&"child".to_owned()));
        assert!(!files.configure_presets().contains(&"base".to_owned()), "hidden");
    }

    #[test]
    fn export_compile_commands_through_inheritance() {
        let files = gsl();
        assert_eq!(files.export_compile_commands("gcc-debug"), Export::Unset);
        assert_eq!(files.export_compile_commands("quiet"), Export::Off);
        assert_eq!(files.export_compile_commands("loud"), Export::On);
        assert_eq!(files.export_compile_commands("unknown"), Export::Unset);
        assert!(is_cmake_false("off") && is_cmake_false("X-NOTFOUND") && !is_cmake_false("ON"));
    }

    #[test]
    fn files_and_includes_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("cmake")).unwrap();
        std::fs::write(
            dir.path().join("CMakePresets.json"),
            r#"{"version": 4, "include": ["cmake/more.json"], "configurePresets": [{"name": "a"}]}"#,
        )
        .unwrap();
        std::fs::write(
            dir.path().join("cmake/more.json"),
            r#"{"version": 4, "include": ["../CMakePresets.json"], "configurePresets": [{"name": "b",
                "cacheVariables": {"CMAKE_EXPORT_COMPILE_COMMANDS": "OFF"}}]}"#,
        )
        .unwrap();
        std::fs::write(dir.path().join("CMakeUserPresets.json"), "not json").unwrap();
        let files = PresetFiles::read(dir.path());
        assert_eq!(files.export_compile_commands("b"), Export::Off);
        let none = PresetLists::default();
        assert_eq!(files.left_out(&none).configure, names(&["a", "b"]));
    }
}
