//! The startup settings as the panel's Settings view shows them: readable values (paths as text,
//! CMake profiles as their fields), never Rust `Debug` dumps.

use serde_json::{Value, json};

use crate::config::{AdminConfig, CmakeProfileSpec, ProfileKind, ServeConfig};

/// The startup settings as the panel shows them.
pub fn settings(config: &ServeConfig, admin: &AdminConfig) -> Value {
    json!({
        "workspace": config.workspace_root().display().to_string(),
        "workspace_storage": config.storage_root().display().to_string(),
        "progress_interval_seconds": config.progress_interval().as_secs_f64(),
        "toolsets": config.toolsets().iter().map(|toolset| json!({
            "name": toolset.name,
            "tools": toolset.tools.iter().map(|tool| json!({
                "tool": tool.spec.name,
                "path": tool.path.display().to_string(),
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "cmake_toolset": config.cmake_toolset(),
        "cmake_profiles": config.cmake_profiles().iter().map(profile_settings).collect::<Vec<_>>(),
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

    #[test]
    fn profiles_are_readable_fields() {
        let temp = tempfile::tempdir().expect("temp dir");
        let workspace = temp.path().to_string_lossy().into_owned();
        let argv = [
            "forgemcp",
            "--workspace",
            &workspace,
            "--cmake-profile",
            "dbg",
            "toolset=system",
            "configuration=Debug",
            "generator=Ninja",
            "define=A=1",
        ];
        let args = crate::cli::Args::try_parse_from(argv).expect("valid command line");
        let config = crate::config::build(args, temp.path()).expect("valid configuration");
        let serve = config.serve().expect("serve mode");
        let profile = &serve.cmake_profiles()[0];
        expect_test::expect![[r#"{"build_directory":"storage/build/cmake-dbg","c_compiler":null,"configuration":"Debug","cxx_compiler":null,"defines":["A=1"],"generator":"Ninja","kind":"plain","name":"dbg","toolchain_file":null,"toolset":"system"}"#]]
        .assert_eq(&profile_settings(profile).to_string());
    }
}
