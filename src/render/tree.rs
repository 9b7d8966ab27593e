//! Directory trees drawn with branch characters, for `workspace_list` text and the tree resource.
//!
//! The first line is the listed directory; each entry shows its name, directories end in `/`, and
//! a suffix says what the tree does not show: `(not expanded)` beyond the depth limit, `(empty)`
//! for an expanded empty directory, `(symlink)` for links (never descended), `(other)` for
//! sockets, FIFOs and devices.

use crate::render::markdown;
use crate::workspace::tree::{DirectoryTree, EntryKind, TreeEntry};

pub(crate) const TEE: &str = "├── ";
pub(crate) const ELBOW: &str = "└── ";
pub(crate) const PIPE: &str = "│   ";
pub(crate) const BLANK: &str = "    ";

/// The plain-text drawing of a listing.
pub fn tree(listing: &DirectoryTree) -> String {
    let mut res = directory_label(&listing.path.to_string());
    if listing.entries.is_empty() {
        res.push_str("\n(empty)");
    }
    draw(&listing.entries, "", &mut res);
    res
}

/// The Markdown resource: a heading and the drawing in a fenced block.
pub fn tree_markdown(listing: &DirectoryTree) -> String {
    format!("# Directory tree\n\n{}\n", markdown::fence(&tree(listing), ""))
}

fn directory_label(path: &str) -> String {
    if path.ends_with('/') { path.to_owned() } else { format!("{path}/") }
}

fn draw(entries: &[TreeEntry], prefix: &str, out: &mut String) {
    for (idx, entry) in entries.iter().enumerate() {
        let last = idx + 1 == entries.len();
        out.push('\n');
        out.push_str(prefix);
        out.push_str(if last { ELBOW } else { TEE });
        out.push_str(&label(entry));
        if let Some(children) = &entry.children {
            let child_prefix = format!("{prefix}{}", if last { BLANK } else { PIPE });
            draw(children, &child_prefix, out);
        }
    }
}

fn label(entry: &TreeEntry) -> String {
    let name = entry.name();
    match (entry.kind, &entry.children) {
        (EntryKind::Directory, None) => format!("{name}/ (not expanded)"),
        (EntryKind::Directory, Some(children)) if children.is_empty() => format!("{name}/ (empty)"),
        (EntryKind::Directory, Some(_)) => format!("{name}/"),
        (EntryKind::Symlink, _) => format!("{name} (symlink)"),
        (EntryKind::Other, _) => format!("{name} (other)"),
        (EntryKind::File, _) => name.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use super::*;
    use crate::workspace::path::QualifiedPath;

    /// Builds a listing from lines `kind path` where kind is `d` (expanded directory), `n` (not
    /// expanded), `f`, `l` or `o`; a path's parent must come before it.
    fn listing(root: &str, lines: &[&str]) -> DirectoryTree {
        fn insert(entries: &mut Vec<TreeEntry>, entry: TreeEntry) {
            let parent = entry.path.parent().expect("entries are below the root");
            if let Some(dir) = entries.iter_mut().find(|e| entry.path.starts_with(&e.path)) {
                if dir.path == parent {
                    dir.children.as_mut().expect("parent is expanded").push(entry);
                } else {
                    insert(dir.children.as_mut().expect("ancestor is expanded"), entry);
                }
                return;
            }
            entries.push(entry);
        }
        let mut entries = Vec::new();
        for line in lines {
            let (kind, path) = line.split_once(' ').unwrap();
            let path = QualifiedPath::parse(path).unwrap();
            let (kind, children) = match kind {
                "d" => (EntryKind::Directory, Some(Vec::new())),
                "n" => (EntryKind::Directory, None),
                "f" => (EntryKind::File, None),
                "l" => (EntryKind::Symlink, None),
                "o" => (EntryKind::Other, None),
                _ => panic!("unknown kind {kind}"),
            };
            insert(&mut entries, TreeEntry { path, kind, children });
        }
        DirectoryTree { path: QualifiedPath::parse(root).unwrap(), entries }
    }

    #[track_caller]
    fn check(root: &str, lines: &[&str], expect: Expect) {
        expect.assert_eq(&tree(&listing(root, lines)));
    }

    #[test]
    fn nested_entries_use_branch_characters() {
        check(
            "project/",
            &[
                "d project/include",
                "f project/include/a.h",
                "d project/src",
                "d project/src/util",
                "f project/src/util/u.cpp",
                "f project/src/main.cpp",
                "f project/CMakeLists.txt",
            ],
            expect![[r#"
                project/
                ├── include/
                │   └── a.h
                ├── src/
                │   ├── util/
                │   │   └── u.cpp
                │   └── main.cpp
                └── CMakeLists.txt"#]],
        );
    }

    #[test]
    fn suffixes_mark_what_is_not_shown() {
        check(
            "project/src",
            &["n project/src/deep", "d project/src/empty", "l project/src/link", "o project/src/fifo"],
            expect![[r#"
                project/src/
                ├── deep/ (not expanded)
                ├── empty/ (empty)
                ├── link (symlink)
                └── fifo (other)"#]],
        );
    }

    #[test]
    fn an_empty_listing_says_so() {
        check(
            "storage/",
            &[],
            expect![[r#"
                storage/
                (empty)"#]],
        );
    }

    #[test]
    fn markdown_fences_the_drawing() {
        let md = tree_markdown(&listing("project/", &["f project/a_b.txt"]));
        expect![[r#"
            # Directory tree

            ```
            project/
            └── a_b.txt
            ```
        "#]]
        .assert_eq(&md);
    }
}
