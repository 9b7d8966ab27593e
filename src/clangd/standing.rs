//! Why clangd cannot answer: the configurations withdrawn in this lifetime (and by which path),
//! the ones that cannot run clangd, the build directories an earlier session left on disk with the
//! call that confirms them, and a project without `CMakeLists.txt`. Silence is never "fine": a
//! C/C++ write or edit and every clangd call that cannot be answered say this.
//!
//! Architecture invariant: a value with its one-line reason (the tool errors' wording); the edit
//! note around it is made in `render::clangd_note`.

use std::fmt;

use schemars::JsonSchema;
use serde::Serialize;

use crate::workspace::path::QualifiedPath;

/// A configuration withdrawn in this server lifetime.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Withdrawn {
    pub id: String,
    /// The qualified path whose change withdrew it, when a write or edit did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
}

/// A published configuration clangd cannot run in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Unusable {
    pub id: String,
    pub reason: String,
}

/// A profile's build directory with a compilation database from an earlier session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct EarlierBuild {
    pub profile: String,
    /// The configure preset whose `binaryDir` it is (a preset profile).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    pub build_directory: String,
}

impl From<(String, Option<String>, QualifiedPath)> for EarlierBuild {
    fn from((profile, preset, dir): (String, Option<String>, QualifiedPath)) -> EarlierBuild {
        EarlierBuild { profile, preset, build_directory: dir.to_string() }
    }
}

/// Why no configuration can analyse a file now.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Unavailable {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub withdrawn: Vec<Withdrawn>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unusable: Vec<Unusable>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub earlier: Vec<EarlierBuild>,
    /// The project has no `CMakeLists.txt`: the build files it has instead (`Makefile`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_cmake: Option<Vec<String>>,
}

/// `a`, `a and b`, `a, b and c`.
fn listed(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if let Some(has) = &self.no_cmake {
            let has = if has.is_empty() { String::new() } else { format!(" (it has {})", listed(has)) };
            parts.push(format!(
                "the project has no CMakeLists.txt{has}, so the CMake tools do not apply; a compile_commands.json at \
                 the project root (bear -- make writes one) or --compile-commands DIR gives clangd the configuration \
                 external"
            ));
        }
        let mut by_path: Vec<(Option<&str>, Vec<String>)> = Vec::new();
        for withdrawn in &self.withdrawn {
            match by_path.iter_mut().find(|(by, _)| *by == withdrawn.by.as_deref()) {
                Some((_, ids)) => ids.push(withdrawn.id.clone()),
                None => by_path.push((withdrawn.by.as_deref(), vec![withdrawn.id.clone()])),
            }
        }
        for (by, ids) in by_path {
            let (noun, verb) = if ids.len() == 1 { ("configuration", "was") } else { ("configurations", "were") };
            let by = by.map(|path| format!(" by {path}")).unwrap_or_default();
            parts.push(format!("{noun} {} {verb} withdrawn{by}; run cmake_configure", listed(&ids)));
        }
        for unusable in &self.unusable {
            parts.push(format!("configuration {} cannot run clangd: {}", unusable.id, unusable.reason));
        }
        if !self.earlier.is_empty() {
            let dirs: Vec<String> = self.earlier.iter().map(|e| e.build_directory.clone()).collect();
            let mut profiles: Vec<String> = Vec::new();
            let mut presets: Vec<String> = Vec::new();
            for earlier in &self.earlier {
                let profile = format!("\"{}\"", earlier.profile);
                if !profiles.contains(&profile) {
                    profiles.push(profile);
                }
                presets.extend(earlier.preset.as_ref().map(|preset| format!("\"{preset}\"")));
            }
            let presets =
                if presets.is_empty() { String::new() } else { format!(" and presets [{}]", presets.join(", ")) };
            let (verb, it) = if dirs.len() == 1 { ("exists", "it") } else { ("exist", "them") };
            parts.push(format!(
                "{} {verb} from an earlier session; cmake_configure with profiles [{}]{presets} confirms {it}",
                listed(&dirs),
                profiles.join(", ")
            ));
        }
        if parts.is_empty() {
            parts.push(
                "no CMake configuration with a compilation database and clangd in its toolset was configured in this \
                 session; run cmake_configure"
                    .to_owned(),
            );
        }
        f.write_str(&parts.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_name_the_way_back() {
        let withdrawn = Unavailable {
            withdrawn: vec![Withdrawn { id: "dbg".into(), by: Some("project/CMakeLists.txt".into()) }],
            ..Unavailable::default()
        };
        assert_eq!(
            withdrawn.to_string(),
            "configuration dbg was withdrawn by project/CMakeLists.txt; run cmake_configure"
        );
        let earlier = Unavailable {
            earlier: vec![EarlierBuild {
                profile: "dbg".into(),
                preset: None,
                build_directory: "storage/build/cmake-dbg".into(),
            }],
            ..Unavailable::default()
        };
        assert_eq!(
            earlier.to_string(),
            "storage/build/cmake-dbg exists from an earlier session; cmake_configure with profiles [\"dbg\"] confirms it"
        );
        let preset = |name: &str| EarlierBuild {
            profile: "presets".into(),
            preset: Some(name.into()),
            build_directory: format!("project/build/{name}"),
        };
        let presets =
            Unavailable { earlier: vec![preset("gcc-debug"), preset("clang-debug")], ..Unavailable::default() };
        assert_eq!(
            presets.to_string(),
            "project/build/gcc-debug and project/build/clang-debug exist from an earlier session; cmake_configure with \
             profiles [\"presets\"] and presets [\"gcc-debug\", \"clang-debug\"] confirms them"
        );
        let two = Unavailable {
            withdrawn: vec![Withdrawn { id: "a".into(), by: None }, Withdrawn { id: "b".into(), by: None }],
            unusable: vec![Unusable { id: "c".into(), reason: "its toolset has no clangd".into() }],
            ..Unavailable::default()
        };
        assert_eq!(
            two.to_string(),
            "configurations a and b were withdrawn; run cmake_configure; configuration c cannot run clangd: its \
             toolset has no clangd"
        );
        let make = Unavailable { no_cmake: Some(vec!["Makefile".into()]), ..Unavailable::default() };
        assert!(make.to_string().starts_with("the project has no CMakeLists.txt (it has Makefile), so the CMake"));
        assert!(!make.to_string().contains("yet"));
        assert!(Unavailable::default().to_string().ends_with("in this session; run cmake_configure"));
    }
}
