use expect_test::{Expect, expect};

use super::*;
use crate::clangd::model::{
    DiagnosticCode, Hover, HoverContent, Location, Preview, RelatedInformation, Severity, WorkspaceSymbol,
};

fn pos(line: u32, character: u32) -> Position {
    Position { line, character }
}

fn span(a: (u32, u32), b: (u32, u32)) -> SourceRange {
    SourceRange { start: pos(a.0, a.1), end: pos(b.0, b.1) }
}

fn check(actual: String, expect: Expect) {
    expect.assert_eq(&actual);
}

#[test]
fn configurations_list_each_context() {
    let contexts = vec![CompilationContext {
        id: "Debug".into(),
        toolset_id: "system".into(),
        build_directory: "storage/build/cmake-Debug".into(),
        compilation_database: "storage/build/cmake-Debug/compile_commands.json".into(),
    }];
    check(
        configurations(&contexts, &Unavailable::default()),
        expect![[r#"
            Available clangd configurations: 1.

            Debug
              Toolset: system
              Build directory: storage/build/cmake-Debug
              Compilation database: storage/build/cmake-Debug/compile_commands.json"#]],
    );
    let earlier = Unavailable {
        earlier: vec![crate::clangd::standing::EarlierBuild {
            profile: "Debug".into(),
            preset: None,
            build_directory: "storage/build/cmake-Debug".into(),
        }],
        ..Unavailable::default()
    };
    check(
        configurations(&[], &earlier),
        expect![[r#"
            Available clangd configurations: 0.
            None is available: storage/build/cmake-Debug exists from an earlier session; cmake_configure with profiles ["Debug"] confirms it."#]],
    );
}

#[test]
fn diagnostics_are_compiler_style() {
    let results = vec![
        DiagnosticsResult {
            configurations: vec!["Debug".into(), "Release".into()],
            path: "project/src/main.cpp".into(),
            diagnostics: vec![
                Diagnostic {
                    range: span((7, 40), (7, 46)),
                    severity: Some(Severity::Error),
                    message: "No member named 'lenght' in 'geometry::Vector'; did you mean 'length'?".into(),
                    code: Some(DiagnosticCode::Text("no_member_suggest".into())),
                    source: Some("clang".into()),
                    tags: vec![],
                    related: vec![RelatedInformation {
                        location: Location {
                            path: "project/include/geometry/vector.hpp".into(),
                            range: span((10, 11), (10, 17)),
                        },
                        message: "'length' declared here".into(),
                    }],
                },
                Diagnostic {
                    range: span((3, 0), (3, 30)),
                    severity: Some(Severity::Warning),
                    message: "Included header vector.hpp is not used directly\nsecond line".into(),
                    code: None,
                    source: Some("clangd".into()),
                    tags: vec![1, 2],
                    related: vec![],
                },
                Diagnostic {
                    range: span((1, 0), (1, 1)),
                    severity: None,
                    message: "bare".into(),
                    code: Some(DiagnosticCode::Number(42)),
                    source: None,
                    tags: vec![],
                    related: vec![],
                },
                Diagnostic {
                    range: span((1, 0), (1, 1)),
                    severity: Some(Severity::Error),
                    message: "Unknown argument: '-fno-tree-vrp'".into(),
                    code: Some(DiagnosticCode::Text("drv_unknown_argument".into())),
                    source: Some("clang".into()),
                    tags: vec![],
                    related: vec![],
                },
            ],
        },
        DiagnosticsResult {
            configurations: vec!["Profile".into()],
            path: "project/src/main.cpp".into(),
            diagnostics: vec![],
        },
    ];
    check(
        diagnostics("project/src/main.cpp", &results),
        expect![[r#"
            Diagnostics for project/src/main.cpp.

            Configurations: Debug, Release
            project/src/main.cpp:7:41: error: No member named 'lenght' in 'geometry::Vector'; did you mean 'length'? [clang, no_member_suggest]
              project/include/geometry/vector.hpp:10:12: note: 'length' declared here
            project/src/main.cpp:3:1: warning: Included header vector.hpp is not used directly [clangd]
              second line
            project/src/main.cpp:1:1: diagnostic: bare [42]
            project/src/main.cpp:1:1: error: Unknown argument: '-fno-tree-vrp' [clang, drv_unknown_argument] (the build's compiler knows this flag; clangd's clang does not, so the build is not affected)

            Configurations: Profile
            No diagnostics reported."#]],
    );
}

#[test]
fn hover_markdown_becomes_plain_text() {
    let markdown = "### function `add`  \n\n---\n→ `int`  \nParameters:  \n- `int lhs`\n- `int rhs`\n\nReturns lhs \\+ rhs, see [docs](https://example.invalid/a_b) and **bold** *em* snake_case\\_name.  \n\n---\n```cpp\n// In namespace fixture\nint add(int lhs, int rhs)\n```";
    let results = vec![
        HoverResult {
            configurations: vec!["Debug".into()],
            path: "project/a.cpp".into(),
            position: pos(11, 12),
            hover: Some(Hover {
                contents: vec![HoverContent { kind: HoverKind::Markdown, text: markdown.into(), language: None }],
                range: Some(span((11, 11), (11, 14))),
            }),
        },
        HoverResult {
            configurations: vec!["Release".into()],
            path: "project/a.cpp".into(),
            position: pos(11, 12),
            hover: None,
        },
    ];
    check(
        hover("project/a.cpp", pos(11, 12), &results),
        expect![[r#"
            Hover at project/a.cpp:11:13.

            Configurations: Debug
            function add
            ────────
            → int
            Parameters:
            - int lhs
            - int rhs

            Returns lhs + rhs, see docs (https://example.invalid/a_b) and bold em snake_case_name.
            ────────
            // In namespace fixture
            int add(int lhs, int rhs)

            Configurations: Release
            No hover information available."#]],
    );
}

#[test]
fn locations_show_previews_or_say_why_not() {
    let results = vec![LocationsResult {
        configurations: vec!["Debug".into()],
        locations: vec![
            NavigationLocation {
                path: "project/src/math.cpp".into(),
                range: span((5, 4), (5, 7)),
                preview: Some(Preview {
                    start_line: 2,
                    text: "\nnamespace fixture {\n\nint add(int lhs, int rhs)\n{\n    return lhs + rhs;\n}\n".into(),
                }),
            },
            NavigationLocation {
                path: "root/usr/include/c++/12/cmath".into(),
                range: span((100, 2), (100, 8)),
                preview: None,
            },
        ],
        omitted: 3,
        index_busy: false,
    }];
    check(
        locations("Definitions", "project/a.cpp", pos(11, 12), &results),
        expect![[r#"
            Definitions at project/a.cpp:11:13.

            Configurations: Debug
            project/src/math.cpp:5:5
              2 | 
              3 | namespace fixture {
              4 | 
              5 | int add(int lhs, int rhs)
              6 | {
              7 |     return lhs + rhs;
              8 | }

            root/usr/include/c++/12/cmath:100:3
              Source preview unavailable.

            …and 3 more locations not shown; pass a larger limit."#]],
    );
    let empty =
        vec![LocationsResult { configurations: vec!["Debug".into()], locations: vec![], omitted: 0, index_busy: true }];
    check(
        locations("References", "project/a.cpp", pos(1, 0), &empty),
        expect![[r#"
            References at project/a.cpp:1:1.

            Configurations: Debug
            No locations found.

            clangd's index was still busy: files it had not indexed yet are missing from this answer; ask again when it is done (a larger timeout waits longer)."#]],
    );
}

#[test]
fn document_symbols_form_a_tree() {
    let symbol = |name: &str, kind: u32, lines: (u32, u32), detail: Option<&str>, children: Vec<DocumentSymbol>| {
        DocumentSymbol {
            name: name.into(),
            kind,
            range: span((lines.0, 0), (lines.1, 1)),
            selection_range: span((lines.0, 0), (lines.0, 1)),
            detail: detail.map(Into::into),
            tags: vec![],
            children,
        }
    };
    let tree = vec![symbol(
        "fixture",
        3,
        (3, 24),
        None,
        vec![
            symbol(
                "Shape",
                5,
                (6, 11),
                Some("class"),
                vec![symbol("name", 6, (10, 10), Some("std::string_view () const"), vec![])],
            ),
            symbol("default_circle", 12, (20, 20), Some("const Circle &()"), vec![]),
            symbol("odd", 99, (22, 22), None, vec![]),
        ],
    )];
    let results = vec![DocumentSymbolsResult {
        configurations: vec!["Debug".into()],
        path: "project/h.hpp".into(),
        symbols: tree,
        omitted: 2,
    }];
    check(
        document_symbols("project/h.hpp", &results),
        expect![[r#"
            Document symbols of project/h.hpp.

            Configurations: Debug
            fixture (namespace), lines 3–24
            ├── Shape (class), lines 6–11
            │   └── name (method, std::string_view () const), line 10
            ├── default_circle (function, const Circle &()), line 20
            └── odd (unknown kind (99)), line 22
            …and 2 more symbols not shown; pass a larger limit or depth."#]],
    );
}

#[test]
fn workspace_symbols_name_their_scope() {
    let results = vec![WorkspaceSymbolsResult {
        configurations: vec!["Debug".into(), "Release".into()],
        symbols: vec![
            WorkspaceSymbol {
                name: "anchor_caller".into(),
                kind: 12,
                location: NavigationLocation {
                    path: "project/analysis/clangd_anchors.cpp".into(),
                    range: span((15, 4), (15, 17)),
                    preview: Some(Preview { start_line: 14, text: "// Caller\nint anchor_caller()\n{\n".into() }),
                },
                container_name: Some("analysis".into()),
                tags: vec![],
            },
            WorkspaceSymbol {
                name: "anchor".into(),
                kind: 13,
                location: NavigationLocation {
                    path: "root/opt/x.h".into(),
                    range: span((1, 0), (1, 6)),
                    preview: None,
                },
                container_name: None,
                tags: vec![],
            },
        ],
        omitted: 2,
        capped: true,
        index_busy: false,
    }];
    check(
        workspace_symbols("anchor", &results),
        expect![[r#"
            Workspace symbols for "anchor".

            Configurations: Debug, Release
            anchor_caller (function)
              Scope: analysis
              project/analysis/clangd_anchors.cpp:15:5
                14 | // Caller
                15 | int anchor_caller()
                16 | {

            anchor (variable)
              root/opt/x.h:1:1
                Source preview unavailable.

            …and 2 more symbols not shown; pass a larger limit.

            clangd returns at most 100 symbols per query, so more may match; a longer query narrows it."#]],
    );
}

#[test]
fn markdown_edge_cases() {
    assert_eq!(markdown_to_text("a * b and 2*3"), "a * b and 2*3");
    assert_eq!(markdown_to_text("x *y* __z__ a_b_c _d_"), "x y z a_b_c d");
    assert_eq!(markdown_to_text("``a ` b``"), "a ` b");
    assert_eq!(markdown_to_text("[x](y"), "[x](y");
    assert_eq!(markdown_to_text("\n\n# Title\n\n\ntext\n\n"), "Title\n\ntext");
    assert_eq!(markdown_to_text("~~~\n  *kept*  \n~~~"), "  *kept*  ");
}

#[test]
fn symbol_kinds_are_spelled_out() {
    assert_eq!(symbol_kind(1), "file");
    assert_eq!(symbol_kind(22), "enum member");
    assert_eq!(symbol_kind(26), "type parameter");
    assert_eq!(symbol_kind(0), "unknown kind (0)");
    assert_eq!(symbol_kind(27), "unknown kind (27)");
}
