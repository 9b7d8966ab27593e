//! Directory trees drawn with branch characters, for `workspace_list` text and the tree resource.
//!
//! The first line is the listed directory; each entry shows its name, directories end in `/`, and
//! a suffix says what the tree does not show: `(not expanded)` beyond the depth limit, `(empty)`
//! for an expanded empty directory, `(symlink)` for links (never descended), `(other)` for
//! sockets, FIFOs and devices.

use std::fmt::Write as _;
use std::ops::ControlFlow;

use crate::render::markdown;
use crate::workspace::tree::{DirectoryTree, EntryKind, TreeEntry};

pub(crate) const TEE: &str = "├── ";
pub(crate) const ELBOW: &str = "└── ";
pub(crate) const PIPE: &str = "│   ";
pub(crate) const BLANK: &str = "    ";

/// The plain-text drawing of a listing.
pub fn tree(listing: &DirectoryTree) -> String {
    tree_limited(listing, usize::MAX)
}

/// The drawing, stopped at the first entry past `max_bytes` of text: a last line then counts the
/// entries left out (they are still in the structured result) and says how to see them drawn.
pub fn tree_limited(listing: &DirectoryTree, max_bytes: usize) -> String {
    let mut res = directory_label(&listing.path.to_string());
    if listing.entries.is_empty() {
        res.push_str("\n(empty)");
    }
    let mut drawing = Drawing { out: res, max_bytes, drawn: 0 };
    if drawing.draw(&listing.entries, "").is_break() {
        let left_out = count(&listing.entries) - drawing.drawn;
        let _ = write!(
            drawing.out,
            "\n… and {left_out} more {}, in the structured result only: the drawing stops after {}. List a \
             subdirectory or a smaller depth to see them drawn.",
            if left_out == 1 { "entry" } else { "entries" },
            if max_bytes >= 1024 { format!("{} KiB", max_bytes >> 10) } else { format!("{max_bytes} bytes") }
        );
    }
    drawing.out
}

/// The Markdown resource: a heading and the drawing in a fenced block.
pub fn tree_markdown(listing: &DirectoryTree) -> String {
    format!("# Directory tree\n\n{}\n", markdown::fence(&tree(listing), ""))
}

fn directory_label(path: &str) -> String {
    if path.ends_with('/') { path.to_owned() } else { format!("{path}/") }
}

/// Entries at every level.
fn count(entries: &[TreeEntry]) -> usize {
    entries.iter().map(|entry| 1 + entry.children.as_deref().map_or(0, count)).sum()
}

struct Drawing {
    out: String,
    max_bytes: usize,
    /// Entries drawn so far.
    drawn: usize,
}

impl Drawing {
    /// Draws `entries` below `prefix`; breaks when the text has reached the limit.
    fn draw(&mut self, entries: &[TreeEntry], prefix: &str) -> ControlFlow<()> {
        for (idx, entry) in entries.iter().enumerate() {
            if self.out.len() >= self.max_bytes {
                return ControlFlow::Break(());
            }
            let last = idx + 1 == entries.len();
            self.out.push('\n');
            self.out.push_str(prefix);
            self.out.push_str(if last { ELBOW } else { TEE });
            push_label(entry, &mut self.out);
            self.drawn += 1;
            if let Some(children) = &entry.children {
                let child_prefix = format!("{prefix}{}", if last { BLANK } else { PIPE });
                self.draw(children, &child_prefix)?;
            }
        }
        ControlFlow::Continue(())
    }
}

fn push_label(entry: &TreeEntry, out: &mut String) {
    let name = entry.name();
    out.push_str(name);
    out.push_str(match (entry.kind, &entry.children) {
        (EntryKind::Directory, None) => "/ (not expanded)",
        (EntryKind::Directory, Some(children)) if children.is_empty() => "/ (empty)",
        (EntryKind::Directory, Some(_)) => "/",
        (EntryKind::Symlink, _) => " (symlink)",
        (EntryKind::Other, _) => " (other)",
        (EntryKind::File, _) => "",
    });
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
    fn a_long_drawing_stops_and_counts_what_it_left_out() {
        let lines = ["d project/a", "f project/a/one", "f project/a/two", "f project/b", "f project/c"];
        let listing = listing("project/", &lines);
        expect![[r#"
            project/
            ├── a/
            │   ├── one
            … and 3 more entries, in the structured result only: the drawing stops after 30 bytes. List a subdirectory or a smaller depth to see them drawn."#]]
        .assert_eq(&tree_limited(&listing, 30));
        assert_eq!(tree_limited(&listing, 1 << 20), tree(&listing));
        let names: Vec<String> = (0..200).map(|i| format!("f project/file{i:03}")).collect();
        let text = tree_limited(&listing_of(&names), 1024);
        let (drawing, last) = text.rsplit_once('\n').unwrap();
        let drawn = drawing.lines().count() - 1;
        assert!((1024..1024 + 20).contains(&drawing.len()), "{}", drawing.len());
        let expected = format!(
            "… and {} more entries, in the structured result only: the drawing stops after 1 KiB.",
            200 - drawn
        );
        assert!(last.starts_with(&expected), "{last}");
    }

    fn listing_of(lines: &[String]) -> DirectoryTree {
        listing("project/", &lines.iter().map(String::as_str).collect::<Vec<_>>())
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
