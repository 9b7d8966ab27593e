//! The journal's records as they are stored (JSON inside the log's frames) and returned: a change
//! with its paths, each path's state before and after, checkpoints.
//!
//! Architecture invariant: these are plain values; nothing here reads or writes files.

use serde::{Deserialize, Serialize};

/// What one path held: nothing, a file (its content by hash, its mode) or a directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum State {
    Absent,
    File {
        /// XXH3-128 of the content (lowercase hex; empty when it was not read).
        hash: String,
        mode: u32,
        size: u64,
        /// Whether the journal holds the content (not when the change was larger than half the
        /// journal's limit).
        kept: bool,
    },
    Directory {
        mode: u32,
    },
}

impl State {
    pub fn is_absent(&self) -> bool {
        matches!(self, State::Absent)
    }

    /// The same kind and content (and, on Unix, mode) as `other`.
    pub fn same_as(&self, other: &State) -> bool {
        let modes = |a: u32, b: u32| !cfg!(unix) || a & 0o7777 == b & 0o7777;
        match (self, other) {
            (State::Absent, State::Absent) => true,
            (State::Directory { mode: a }, State::Directory { mode: b }) => modes(*a, *b),
            (State::File { hash: a, mode: ma, .. }, State::File { hash: b, mode: mb, .. }) => a == b && modes(*ma, *mb),
            _ => false,
        }
    }
}

/// What a change did to one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Created,
    Modified,
    Deleted,
    /// The path was moved away, to `other`.
    MovedTo,
    /// The path was moved here, from `other`.
    MovedFrom,
}

impl Action {
    /// The action that leads from `before` to `after` (moves are named by the recorder).
    pub fn between(before: &State, after: &State) -> Action {
        match (before.is_absent(), after.is_absent()) {
            (true, _) => Action::Created,
            (false, true) => Action::Deleted,
            (false, false) => Action::Modified,
        }
    }
}

/// One path a change touched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathChange {
    /// The qualified path.
    pub path: String,
    pub action: Action,
    /// The other end of a move.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other: Option<String>,
    pub before: State,
    pub after: State,
    /// Lines added and removed (text files; 0 for binary files and directories).
    pub added: u64,
    pub removed: u64,
}

/// What a revert change went back to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RevertTarget {
    /// The first change undone (every later one was undone too).
    pub from_change: u64,
    /// The checkpoint named in the call, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<String>,
    /// Only these paths were restored (empty: all).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
}

/// One change: everything one tool call changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    pub id: u64,
    /// Milliseconds since the Unix epoch.
    pub at_ms: i64,
    pub tool: String,
    /// `client`, `panel` or `server` (internal work).
    pub origin: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    pub paths: Vec<PathChange>,
    /// Set on a change made by `workspace_revert`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revert: Option<RevertTarget>,
    /// Bytes this change added to the journal's blobs.
    #[serde(default)]
    pub stored_bytes: u64,
}

/// A named point: the state after change `after` (0: before the first change).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    pub name: String,
    pub after: u64,
    pub at_ms: i64,
}

/// The first record of a log: its format and what came before it (after older changes were
/// dropped).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// The next change id to hand out is at least this (ids are never reused).
    pub next_id: u64,
    /// Changes before this id were dropped (0 or 1: nothing was).
    pub first_id: u64,
    /// The on-disk format (`log::FORMAT`; absent in format 1).
    #[serde(default = "format_1")]
    pub format: u32,
    /// Set by the conversion of a format 1 journal: how many of its stored contents could not be
    /// carried over (damaged), so the changes that need them say their content was not kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub migrated: Option<Migrated>,
}

fn format_1() -> u32 {
    1
}

impl Header {
    pub fn new(next_id: u64, first_id: u64) -> Header {
        Header { next_id, first_id, format: super::log::FORMAT, migrated: None }
    }
}

/// What the conversion of a format 1 journal carried over.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Migrated {
    /// From format 1.
    pub from: u32,
    pub at_ms: i64,
    /// Changes and contents converted.
    pub changes: u64,
    pub contents: u64,
    /// Contents that could not be read back (their changes now say the content was not kept).
    pub lost: u64,
}
