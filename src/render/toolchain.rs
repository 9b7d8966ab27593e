//! Toolset renderings: plain text for `toolsets_list` and `toolset_get` (INTERFACE.md §12) and
//! Markdown for `forgemcp://toolsets` and `forgemcp://toolsets/{toolset_id}` (§8).
//!
//! Architecture invariant: pure functions of `toolchain` values; environments are never rendered.

use std::fmt::Write as _;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

use super::markdown;
use crate::toolchain::{ToolVersion, Toolset, ToolsetId};

/// Characters of an id kept as they are in a resource URI (RFC 3986 unreserved).
const URI_KEPT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');

/// `forgemcp://toolsets/<id>`, the id percent-encoded (Visual Studio ids contain `%`).
pub fn toolset_uri(id: &ToolsetId) -> String {
    format!("forgemcp://toolsets/{}", utf8_percent_encode(id.as_str(), URI_KEPT))
}

fn tool_names(toolset: &Toolset) -> Option<String> {
    let names: Vec<&str> = toolset.tools().iter().map(|tool| tool.name()).collect();
    (!names.is_empty()).then(|| names.join(", "))
}

/// `toolsets_list`: a count, then each toolset with its tool names.
pub fn list_text(toolsets: &[impl AsRef<Toolset>]) -> String {
    let mut res = format!("Discovered toolsets: {}.", toolsets.len());
    for toolset in toolsets {
        let toolset = toolset.as_ref();
        let tools = tool_names(toolset).unwrap_or_else(|| "none".to_owned());
        let _ = write!(res, "\n\n{} ({})\n  Tools: {tools}", toolset.name(), toolset.id());
    }
    res
}

/// `toolset_get`: the toolset, then one line per tool with kind, path and version.
pub fn detail_text(toolset: &Toolset, versions: &[ToolVersion]) -> String {
    let mut res = format!("{} ({})", toolset.name(), toolset.id());
    if versions.is_empty() {
        res.push_str("\n  Tools: none");
    }
    for ToolVersion { tool, version } in versions {
        let version = version.as_deref().unwrap_or("unknown");
        let _ = write!(res, "\n  {} ({}): {}; version {version}", tool.name(), tool.spec.kind, tool.path.display());
    }
    res
}

/// The `forgemcp://toolsets` resource: one table row per toolset; no versions.
pub fn list_markdown(toolsets: &[impl AsRef<Toolset>]) -> String {
    let mut res = String::from("# Toolsets\n\n");
    if toolsets.is_empty() {
        res.push_str("No toolsets were discovered.\n");
        return res;
    }
    res.push_str("| ID | Name | Tools |\n| --- | --- | --- |\n");
    for toolset in toolsets {
        let toolset = toolset.as_ref();
        let _ = writeln!(
            res,
            "| {} | {} | {} |",
            markdown::link(toolset.id().as_str(), &toolset_uri(toolset.id())),
            markdown::cell(toolset.name()),
            markdown::cell(&tool_names(toolset).unwrap_or_else(|| "None".to_owned())),
        );
    }
    res
}

/// The `forgemcp://toolsets/{toolset_id}` resource: tools with kinds, paths and fresh versions.
pub fn detail_markdown(toolset: &Toolset, versions: &[ToolVersion]) -> String {
    let mut res =
        format!("# {}\n\nID: {}\n\n", markdown::escape(toolset.name()), markdown::escape(toolset.id().as_str()));
    if versions.is_empty() {
        res.push_str("No tools were found in this toolset.\n");
        return res;
    }
    res.push_str("| Tool | Kind | Absolute path | Version |\n| --- | --- | --- | --- |\n");
    for ToolVersion { tool, version } in versions {
        let _ = writeln!(
            res,
            "| {} | {} | {} | {} |",
            markdown::cell(tool.name()),
            markdown::cell(tool.spec.kind.as_str()),
            markdown::cell(&tool.path.display().to_string()),
            markdown::cell(version.as_deref().unwrap_or("Unknown")),
        );
    }
    res
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::Arc;

    use expect_test::{Expect, expect};

    use super::*;
    use crate::toolchain::spec::lookup;
    use crate::toolchain::{SYSTEM_NAME, Tool};

    #[track_caller]
    fn check(actual: String, expect: Expect) {
        expect.assert_eq(&actual);
    }

    fn tool(name: &str, path: &str) -> Tool {
        Tool { spec: lookup(name).unwrap(), path: PathBuf::from(path) }
    }

    fn system() -> Toolset {
        Toolset::new(
            ToolsetId::system(),
            SYSTEM_NAME.to_owned(),
            vec![tool("ninja", "/usr/bin/ninja"), tool("cmake", "/usr/bin/cmake"), tool("g++", "/usr/bin/g++")],
            None,
        )
    }

    fn user() -> Toolset {
        Toolset::new(ToolsetId::user("LLVM | 20"), "LLVM | 20".to_owned(), Vec::new(), None)
    }

    fn versions(toolset: &Toolset, known: &[(&str, &str)]) -> Vec<ToolVersion> {
        toolset
            .tools()
            .iter()
            .map(|tool| ToolVersion {
                tool: tool.clone(),
                version: known.iter().find(|(name, _)| *name == tool.name()).map(|(_, v)| (*v).to_owned()),
            })
            .collect()
    }

    #[test]
    fn list_as_text() {
        let toolsets = [Arc::new(system()), Arc::new(user())];
        check(
            list_text(&toolsets),
            expect![[r#"
                Discovered toolsets: 2.

                System (system)
                  Tools: cmake, g++, ninja

                LLVM | 20 (user-f4783ac82db5b4292b3d75cd26471458137a19d9ecd435b98e1eb11d53aabd98)
                  Tools: none"#]],
        );
        let none: [Arc<Toolset>; 0] = [];
        check(list_text(&none), expect!["Discovered toolsets: 0."]);
    }

    #[test]
    fn detail_as_text() {
        let system = system();
        check(
            detail_text(&system, &versions(&system, &[("cmake", "3.25.1"), ("ninja", "1.11.1")])),
            expect![[r#"
                System (system)
                  cmake (build_system): /usr/bin/cmake; version 3.25.1
                  g++ (compiler): /usr/bin/g++; version unknown
                  ninja (build_runner): /usr/bin/ninja; version 1.11.1"#]],
        );
        check(
            detail_text(&user(), &[]),
            expect![[r#"
            LLVM | 20 (user-f4783ac82db5b4292b3d75cd26471458137a19d9ecd435b98e1eb11d53aabd98)
              Tools: none"#]],
        );
    }

    #[test]
    fn list_as_markdown() {
        let vs = Toolset::new(
            ToolsetId::visual_studio("a b"),
            "Visual Studio Community 2022".to_owned(),
            vec![tool("cmake", "C:\\VS\\cmake.exe")],
            None,
        );
        let toolsets = [Arc::new(system()), Arc::new(user()), Arc::new(vs)];
        check(
            list_markdown(&toolsets),
            expect![[r#"
                # Toolsets

                | ID | Name | Tools |
                | --- | --- | --- |
                | [system](forgemcp://toolsets/system) | System | cmake, g++, ninja |
                | [user-f4783ac82db5b4292b3d75cd26471458137a19d9ecd435b98e1eb11d53aabd98](forgemcp://toolsets/user-f4783ac82db5b4292b3d75cd26471458137a19d9ecd435b98e1eb11d53aabd98) | LLVM \| 20 | None |
                | [visual-studio-a%20b](forgemcp://toolsets/visual-studio-a%2520b) | Visual Studio Community 2022 | cmake |
            "#]],
        );
        let none: [Arc<Toolset>; 0] = [];
        check(
            list_markdown(&none),
            expect![[r#"
            # Toolsets

            No toolsets were discovered.
        "#]],
        );
    }

    #[test]
    fn detail_as_markdown() {
        let system = system();
        check(
            detail_markdown(&system, &versions(&system, &[("cmake", "3.25.1")])),
            expect![[r#"
                # System

                ID: system

                | Tool | Kind | Absolute path | Version |
                | --- | --- | --- | --- |
                | cmake | build_system | /usr/bin/cmake | 3.25.1 |
                | g++ | compiler | /usr/bin/g++ | Unknown |
                | ninja | build_runner | /usr/bin/ninja | Unknown |
            "#]],
        );
        check(
            detail_markdown(&user(), &[]),
            expect![[r#"
                # LLVM | 20

                ID: user-f4783ac82db5b4292b3d75cd26471458137a19d9ecd435b98e1eb11d53aabd98

                No tools were found in this toolset.
            "#]],
        );
    }
}
