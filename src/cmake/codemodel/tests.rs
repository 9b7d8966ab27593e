//! Tests of the codemodel parser on a reply recorded from CMake 3.25 (a static library with a
//! header among its sources and an executable linking it), trimmed and with `/src/cm` as its paths.

use expect_test::expect;

use super::*;

const CODEMODEL: &str = r#"{"configurations": [{"name": "Debug", "targets": [{"id": "app::@6890427a1f51a3e7e1df", "jsonFile": "app.json", "name": "app"}, {"id": "core::@6890427a1f51a3e7e1df", "jsonFile": "core.json", "name": "core"}]}], "kind": "codemodel", "paths": {"source": "/src/cm", "build": "/src/cm/b"}, "version": {"major": 2, "minor": 4}}"#;
const CORE: &str = r#"{"artifacts": [{"path": "libcore.a"}], "backtrace": 1, "backtraceGraph": {"commands": ["add_library"], "files": ["CMakeLists.txt"], "nodes": [{"file": 0}, {"command": 0, "file": 0, "line": 3, "parent": 0}]}, "id": "core::@6890427a1f51a3e7e1df", "name": "core", "sources": [{"backtrace": 1, "compileGroupIndex": 0, "path": "src/core.cpp", "sourceGroupIndex": 0}, {"backtrace": 1, "path": "src/core.h", "sourceGroupIndex": 1}], "type": "STATIC_LIBRARY"}"#;
const APP: &str = r#"{"artifacts": [{"path": "app"}], "backtrace": 1, "backtraceGraph": {"commands": ["add_executable", "target_link_libraries"], "files": ["CMakeLists.txt"], "nodes": [{"file": 0}, {"command": 0, "file": 0, "line": 4, "parent": 0}, {"command": 1, "file": 0, "line": 5, "parent": 0}]}, "dependencies": [{"backtrace": 2, "id": "core::@6890427a1f51a3e7e1df"}], "id": "app::@6890427a1f51a3e7e1df", "link": {"commandFragments": [{"fragment": "-g", "role": "flags"}, {"fragment": "", "role": "flags"}, {"backtrace": 2, "fragment": "libcore.a", "role": "libraries"}], "language": "CXX"}, "name": "app", "sources": [{"backtrace": 1, "compileGroupIndex": 0, "path": "src/main.cpp", "sourceGroupIndex": 0}], "type": "EXECUTABLE"}"#;

fn model() -> Vec<Configuration> {
    parse(CODEMODEL, |name| match name {
        "core.json" => Some(CORE.to_owned()),
        "app.json" => Some(APP.to_owned()),
        _ => None,
    })
    .unwrap()
}

#[test]
fn targets_with_artifacts_sources_dependencies_and_defining_lines() {
    expect![[r#"
        [
            Configuration {
                name: "Debug",
                source: "/src/cm",
                build: "/src/cm/b",
                targets: [
                    Target {
                        name: "app",
                        id: "app::@6890427a1f51a3e7e1df",
                        kind: "executable",
                        artifacts: [
                            "/src/cm/b/app",
                        ],
                        dependencies: [
                            "core",
                        ],
                        sources: [
                            Source {
                                path: "/src/cm/src/main.cpp",
                                compiled: true,
                            },
                        ],
                        link_files: [
                            "/src/cm/b/libcore.a",
                        ],
                        defined_at: Some(
                            (
                                "/src/cm/CMakeLists.txt",
                                4,
                            ),
                        ),
                    },
                    Target {
                        name: "core",
                        id: "core::@6890427a1f51a3e7e1df",
                        kind: "static_library",
                        artifacts: [
                            "/src/cm/b/libcore.a",
                        ],
                        dependencies: [],
                        sources: [
                            Source {
                                path: "/src/cm/src/core.cpp",
                                compiled: true,
                            },
                            Source {
                                path: "/src/cm/src/core.h",
                                compiled: false,
                            },
                        ],
                        link_files: [],
                        defined_at: Some(
                            (
                                "/src/cm/CMakeLists.txt",
                                3,
                            ),
                        ),
                    },
                ],
            },
        ]
    "#]]
    .assert_debug_eq(&model());
}

#[test]
fn closure_lookups_and_compiling_targets() {
    let model = model();
    let debug = &model[0];
    let names = |targets: Vec<&Target>| targets.iter().map(|t| t.name.clone()).collect::<Vec<_>>().join(", ");
    assert_eq!(names(debug.closure("app")), "app, core");
    assert_eq!(names(debug.closure("core")), "core");
    assert_eq!(names(debug.closure("missing")), "");
    assert_eq!(debug.target_with_artifact(Path::new("/src/cm/b/libcore.a")).map(|t| t.name.as_str()), Some("core"));
    assert_eq!(names(debug.compiling(Path::new("/src/cm/src/core.cpp"))), "core");
    assert_eq!(names(debug.compiling(Path::new("/src/cm/src/core.h"))), "");
}

#[test]
fn unreadable_target_files_and_bad_json() {
    let model = parse(CODEMODEL, |_| None).unwrap();
    assert_eq!(model[0].targets[1].name, "core");
    assert!(model[0].targets[1].artifacts.is_empty());
    expect!["the codemodel is not JSON: EOF while parsing a value at line 1 column 0"]
        .assert_eq(&parse("", |_| None).unwrap_err());
}
