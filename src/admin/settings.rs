//! The startup settings as the panel's Settings view shows them: readable values (paths as text,
//! CMake profiles as their fields), never Rust `Debug` dumps.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use super::options::AdminConfig;
use crate::cmake::{CmakeOptions, CmakeProfileSpec, ProfileKind};
use crate::toolchain::UserToolsetSpec;

/// What a server was started with, as the composition root hands it to the panel.
#[derive(Debug, Clone, Copy)]
pub struct StartupSettings<'a> {
    pub workspace_root: &'a Path,
    pub storage_root: &'a Path,
    pub progress_interval: Duration,
    pub toolsets: &'a [UserToolsetSpec],
    pub cmake: &'a CmakeOptions,
    pub admin: &'a AdminConfig,
}

/// The startup settings as the panel shows them.
pub fn settings(startup: &StartupSettings<'_>) -> Value {
    let admin = startup.admin;
    json!({
        "workspace": startup.workspace_root.display().to_string(),
        "workspace_storage": startup.storage_root.display().to_string(),
        "progress_interval_seconds": startup.progress_interval.as_secs_f64(),
        "toolsets": startup.toolsets.iter().map(|toolset| json!({
            "name": toolset.name,
            "tools": toolset.tools.iter().map(|tool| json!({
                "tool": tool.spec.name,
                "path": tool.path.display().to_string(),
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "cmake_toolset": startup.cmake.toolset,
        "cmake_profiles": startup.cmake.profiles.iter().map(profile_settings).collect::<Vec<_>>(),
        "admin_ipc": admin.ipc_name(),
        "admin_port": admin.port(),
    })
}

/// One CMake profile as readable fields (what its `--cmake-profile` said, with the defaults).
fn profile_settings(profile: &CmakeProfileSpec) -> Value {
    let mut res = json!({
        "name": profile.name,
        "toolset": profile.toolset,
        "configuration": profile.configuration,
        "build_directory": profile.build_directory().map(ToString::to_string),
        "env": profile.env.iter().map(crate::cmake::ProfileEnv::shown).collect::<Vec<_>>(),
    });
    let details = match &profile.kind {
        ProfileKind::Plain(plain) => json!({
            "kind": "plain",
            "generator": plain.generator,
            "c_compiler": plain.c_compiler.map(|tool| tool.name),
            "cxx_compiler": plain.cxx_compiler.map(|tool| tool.name),
            "toolchain_file": plain.toolchain_file.as_ref().map(ToString::to_string),
            "defines": plain.defines.iter().map(|d| format!("{}={}", d.name, d.value)).collect::<Vec<_>>(),
        }),
        ProfileKind::Presets(presets) => json!({
            "kind": "presets",
            "configure_presets": presets.configure_presets,
            "build_presets": presets.build_presets,
            "test_presets": presets.test_presets,
        }),
    };
    if let (Value::Object(res), Value::Object(details)) = (&mut res, details) {
        res.extend(details);
    }
    res
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmake::{CmakeDefine, PlainProfile, ProfileEnv};
    use crate::workspace::path::QualifiedPath;

    #[test]
    fn profiles_are_readable_fields() {
        let profile = CmakeProfileSpec {
            name: "dbg".to_owned(),
            toolset: "system".to_owned(),
            configuration: Some("Debug".to_owned()),
            kind: ProfileKind::Plain(PlainProfile {
                defines: vec![CmakeDefine { name: "A".to_owned(), value: "1".to_owned() }],
                ..PlainProfile::new(QualifiedPath::parse("storage/build/cmake-dbg").expect("workspace path"), "Ninja")
            }),
            env: vec![
                ProfileEnv { name: "DISTCC_HOSTS".to_owned(), value: "127.0.0.1/4".to_owned() },
                ProfileEnv { name: "CCACHE_REMOTE_STORAGE_TOKEN".to_owned(), value: "hidden".to_owned() },
            ],
        };
        expect_test::expect![[r#"{"build_directory":"storage/build/cmake-dbg","c_compiler":null,"configuration":"Debug","cxx_compiler":null,"defines":["A=1"],"env":["DISTCC_HOSTS=127.0.0.1/4","CCACHE_REMOTE_STORAGE_TOKEN=(set)"],"generator":"Ninja","kind":"plain","name":"dbg","toolchain_file":null,"toolset":"system"}"#]]
        .assert_eq(&profile_settings(&profile).to_string());
    }
}
