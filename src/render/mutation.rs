//! Plain-text results of the workspace mutations: one sentence each (INTERFACE.md §12).

use crate::workspace::edit::FileEdit;
use crate::workspace::mutate::{PathAction, PathOperation};
use crate::workspace::write::{FileWrite, WriteAction};

fn lines(n: u64) -> String {
    if n == 1 { "1 line".to_owned() } else { format!("{n} lines") }
}

/// `Created project/a.txt (3 lines added).` or `Overwrote project/a.txt (2 lines removed, 3 lines added).`,
/// then what was converted to keep the file's form.
pub fn file_written(write: &FileWrite) -> String {
    let mut res = written(write);
    let kept = match (write.kept.crlf, write.kept.bom) {
        (true, true) => "CRLF line endings and UTF-8 byte-order mark (the text had LF endings and no mark)",
        (true, false) => "CRLF line endings (the text had LF endings)",
        (false, true) => "UTF-8 byte-order mark (the text had none)",
        (false, false) => return res,
    };
    res.push_str(&format!(" Kept the file's {kept}; exact: true writes the text as given."));
    res
}

fn written(write: &FileWrite) -> String {
    match write.action {
        WriteAction::Created => format!("Created {} ({} added).", write.path, lines(write.lines_added)),
        WriteAction::Overwritten => format!(
            "Overwrote {} ({} removed, {} added).",
            write.path,
            lines(write.lines_removed),
            lines(write.lines_added)
        ),
    }
}

/// `Updated project/a.txt: replaced 1 occurrence.`
pub fn file_edited(edit: &FileEdit) -> String {
    let occurrences =
        if edit.replacements == 1 { "1 occurrence".to_owned() } else { format!("{} occurrences", edit.replacements) };
    format!("Updated {}: replaced {occurrences}.", edit.path)
}

/// The sentence for a move, delete or mkdir.
pub fn path_operation(op: &PathOperation) -> String {
    match (op.action, &op.source) {
        (PathAction::Moved, Some(source)) => format!("Moved {source} to {}.", op.path),
        (PathAction::Moved, None) => format!("Moved to {}.", op.path),
        (PathAction::Deleted, _) => format!("Deleted {}.", op.path),
        (PathAction::Created, _) => format!("Created directory {}.", op.path),
        (PathAction::AlreadyExists, _) => format!("Directory {} already exists.", op.path),
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::workspace::diff::FileDiff;
    use crate::workspace::path::QualifiedPath;
    use crate::workspace::write::KeptForm;

    fn q(s: &str) -> QualifiedPath {
        QualifiedPath::parse(s).unwrap()
    }

    fn write(action: WriteAction, lines_removed: u64, lines_added: u64) -> String {
        let path = q("project/src/a.cpp");
        let diff = FileDiff { path: path.clone(), changes: Vec::new(), hunks: Vec::new() };
        file_written(&FileWrite {
            path,
            action,
            lines_removed,
            lines_added,
            diff,
            before: None,
            kept: KeptForm::default(),
        })
    }

    #[test]
    fn writes_count_lines() {
        expect!["Created project/src/a.cpp (1 line added)."].assert_eq(&write(WriteAction::Created, 0, 1));
        expect!["Created project/src/a.cpp (0 lines added)."].assert_eq(&write(WriteAction::Created, 0, 0));
        expect!["Overwrote project/src/a.cpp (2 lines removed, 3 lines added)."].assert_eq(&write(
            WriteAction::Overwritten,
            2,
            3,
        ));
    }

    #[test]
    fn edits_count_occurrences() {
        let edit = |replacements| {
            let path = q("project/a.txt");
            let diff = FileDiff { path: path.clone(), changes: Vec::new(), hunks: Vec::new() };
            file_edited(&FileEdit { path, replacements, diff, before: "".into() })
        };
        expect!["Updated project/a.txt: replaced 1 occurrence."].assert_eq(&edit(1));
        expect!["Updated project/a.txt: replaced 4 occurrences."].assert_eq(&edit(4));
    }

    #[test]
    fn path_operations_are_one_sentence() {
        let op = |path: &str, action, source: Option<&str>| {
            path_operation(&PathOperation { path: q(path), action, source: source.map(q) })
        };
        expect!["Moved project/a to project/b/a."].assert_eq(&op("project/b/a", PathAction::Moved, Some("project/a")));
        expect!["Deleted storage/build."].assert_eq(&op("storage/build", PathAction::Deleted, None));
        expect!["Created directory project/x/y."].assert_eq(&op("project/x/y", PathAction::Created, None));
        expect!["Directory project/ already exists."].assert_eq(&op("project/", PathAction::AlreadyExists, None));
    }
}
