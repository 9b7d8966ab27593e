//! Text of the undo journal's tools: `workspace_history` (one line per change), the checkpoint
//! sentence and `workspace_revert`'s list of files.

use crate::workspace::journal::History;
use crate::workspace::journal::model::{Action, Change, Checkpoint, PathChange};
use crate::workspace::journal::revert::{RevertOutcome, RevertedPath};

/// `14:03:11` (UTC) of a time in milliseconds since the epoch.
pub fn clock(at_ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(at_ms).map_or_else(|| "?".to_owned(), |t| t.format("%H:%M:%S").to_string())
}

/// `2026-12-05 14:03:11 UTC`.
pub fn timestamp(at_ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(at_ms)
        .map_or_else(|| "?".to_owned(), |t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string())
}

fn mib(bytes: u64) -> String {
    format!("{} MiB", bytes / (1024 * 1024))
}

/// One path of a change: `project/a.cpp +3 -1`, `project/old.txt deleted`, `project/b moved from project/a`.
fn path_summary(path: &PathChange) -> String {
    let counts =
        if path.added + path.removed > 0 { format!(" +{} -{}", path.added, path.removed) } else { String::new() };
    match (path.action, &path.other) {
        (Action::Created, _) => format!("{} created{counts}", path.path),
        (Action::Modified, _) => format!("{}{counts}", path.path),
        (Action::Deleted, _) => format!("{} deleted", path.path),
        (Action::MovedFrom, Some(other)) => format!("{} moved from {other}", path.path),
        (Action::MovedTo, _) | (Action::MovedFrom, None) => String::new(),
    }
}

/// `#12 14:03:11 workspace_edit_file project/src/a.cpp +3 -1`, with the panel, a revert and the
/// revert that undid it named.
pub fn change_line(change: &Change, reverted_by: Option<u64>) -> String {
    let shown: Vec<String> = change.paths.iter().map(path_summary).filter(|s| !s.is_empty()).collect();
    let mut line = format!("#{} {} {}", change.id, clock(change.at_ms), change.tool);
    if change.origin == "panel" {
        line.push_str(" (admin panel)");
    }
    if !shown.is_empty() {
        line.push(' ');
        line.push_str(&shown[..shown.len().min(3)].join(", "));
    }
    if shown.len() > 3 {
        line.push_str(&format!(" and {} more", shown.len() - 3));
    }
    if let Some(target) = &change.revert {
        match &target.checkpoint {
            Some(name) => line.push_str(&format!(" [went back to checkpoint \"{name}\"]")),
            None => line.push_str(&format!(" [went back to before #{}]", target.from_change)),
        }
    }
    if let Some(by) = reverted_by {
        line.push_str(&format!(" (reverted by #{by})"));
    }
    line
}

/// The history: one line per change, newest first, checkpoints marked, and how far back it reaches.
pub fn history(history: &History, filter: Option<&str>) -> String {
    let mut out = String::new();
    let scope = filter.map(|f| format!(" touching {f}")).unwrap_or_default();
    if history.matching == 0 {
        out.push_str(&format!("No changes{scope} in the journal."));
    } else {
        let shown = history.changes.len();
        out.push_str(&format!("{} of {} changes{scope}, newest first:\n", shown, history.matching));
    }
    for entry in &history.changes {
        for name in &entry.checkpoints {
            out.push_str(&format!("── checkpoint \"{name}\" ──\n"));
        }
        out.push_str(&change_line(&entry.change, entry.reverted_by));
        out.push('\n');
    }
    let before_first: Vec<&Checkpoint> =
        history.checkpoints.iter().filter(|c| history.reaches.is_none_or(|(first, _)| c.after < first)).collect();
    for checkpoint in before_first {
        out.push_str(&format!("── checkpoint \"{}\" (before every change the journal holds) ──\n", checkpoint.name));
    }
    if !out.ends_with('\n') {
        out.push('\n');
    }
    match history.reaches {
        Some((first, at)) if history.dropped => out.push_str(&format!(
            "The journal reaches back to change #{first} ({}); older changes were dropped to keep it under {}.",
            timestamp(at),
            mib(history.limit)
        )),
        Some((first, at)) => out.push_str(&format!(
            "The journal reaches back to change #{first} ({}), the first change it recorded.",
            timestamp(at)
        )),
        None => out.push_str("The journal holds no changes yet."),
    }
    if let Some(migrated) = &history.migrated {
        out.push_str(&format!(
            "\nIt was converted from an older format on {}: {} changes and {} stored contents carried over",
            timestamp(migrated.at_ms),
            migrated.changes,
            migrated.contents
        ));
        match migrated.lost {
            0 => out.push_str(", nothing lost."),
            lost => out.push_str(&format!(
                "; {lost} stored {} damaged and could not be carried over, so a revert to {} says the content was not kept.",
                if lost == 1 { "content was" } else { "contents were" },
                if lost == 1 { "it" } else { "them" }
            )),
        }
    }
    out
}

/// `Checkpoint "before-refactor" marks the state after change #12.`
pub fn checkpoint(checkpoint: &Checkpoint) -> String {
    match checkpoint.after {
        0 => format!("Checkpoint \"{}\" marks the state before the first change.", checkpoint.name),
        after => format!("Checkpoint \"{}\" marks the state after change #{after}.", checkpoint.name),
    }
}

fn path_line(path: &RevertedPath) -> String {
    let what = match (path.action, path.directory) {
        (Action::Created, true) => "recreated directory",
        (Action::Created, false) => "recreated",
        (Action::Deleted, true) => "removed directory",
        (Action::Deleted, false) => "removed",
        _ => "restored",
    };
    let counts =
        if path.added + path.removed > 0 { format!(" (+{} -{})", path.added, path.removed) } else { String::new() };
    let outside = if path.outside { " [changed outside ForgeMCP: overwritten]" } else { "" };
    format!("  {what} {}{counts}{outside}", path.path)
}

/// The revert's summary and every file it changed.
pub fn revert(outcome: &RevertOutcome) -> String {
    let target = match &outcome.checkpoint {
        Some(name) => format!("checkpoint \"{name}\""),
        None => format!("before change #{}", outcome.from_change),
    };
    let count = match outcome.paths.len() {
        1 => "1 path".to_owned(),
        n => format!("{n} paths"),
    };
    let mut out = if outcome.paths.is_empty() {
        format!("Nothing to revert: every path is already as it was at {target}.")
    } else if outcome.dry_run {
        format!("Dry run: going back to {target} would change {count} (nothing was changed):")
    } else {
        match outcome.change {
            Some(id) => format!("Went back to {target} as change #{id}, changing {count}:"),
            None => format!("Went back to {target}, changing {count}:"),
        }
    };
    for path in &outcome.paths {
        out.push('\n');
        out.push_str(&path_line(path));
    }
    for dir in &outcome.kept_directories {
        out.push_str(&format!("\n  kept directory {dir}: it holds entries the journal never recorded"));
    }
    if let (Some(id), false) = (outcome.change, outcome.dry_run) {
        out.push_str(&format!("\nTo redo, revert change #{id}."));
    }
    out
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::workspace::journal::model::State;

    fn file(hash: &str) -> State {
        State::File { hash: hash.into(), mode: 0o644, size: 3, kept: true }
    }

    #[test]
    fn a_change_is_one_line() {
        let change = Change {
            id: 12,
            at_ms: 1_764_943_391_000,
            tool: "workspace_edit_file".into(),
            origin: "client".into(),
            client: None,
            paths: vec![PathChange {
                path: "project/src/a.cpp".into(),
                action: Action::Modified,
                other: None,
                before: file("a"),
                after: file("b"),
                added: 3,
                removed: 1,
            }],
            revert: None,
            stored_bytes: 0,
        };
        expect!["#12 14:03:11 workspace_edit_file project/src/a.cpp +3 -1 (reverted by #14)"]
            .assert_eq(&change_line(&change, Some(14)));
    }
}
