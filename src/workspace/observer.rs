//! The mutation observer hook: how services that depend on the workspace (CMake input tracking,
//! clangd file notifications) learn about every change the workspace tools make.
//!
//! Observers are called at the operation boundary: after the change is on disk and while the
//! workspace's exclusive mutation lock is still held. So an observer sees changes one at a time, in
//! the order they happened, and no other workspace operation (read or write) can observe the tree
//! between the change and the notification. The price is that observers must be quick and must not
//! call back into the workspace service (its lock is not reentrant); slow work belongs on the
//! observer's own task, fed from `mutated`.
//!
//! Architecture invariant: every successful mutation is reported exactly once; a mutation that
//! failed part-way (a recursive delete interrupted by an I/O error) reports what it did change.
//! A panicking observer is logged and does not fail the file operation.

use crate::workspace::path::QualifiedPath;

/// Whether an affected path is a file or a directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Directory,
    /// A FIFO, socket or device inside a moved or deleted tree.
    Other,
}

/// One affected path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Affected {
    pub path: QualifiedPath,
    pub kind: EntryKind,
}

/// What kind of change happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MutationKind {
    /// `workspace_write_file` created a new file.
    Created,
    /// `workspace_write_file` replaced an existing file.
    Written,
    /// `workspace_edit_file` replaced text in an existing file.
    Edited,
    /// `workspace_move` moved a file or a directory tree.
    Moved { from: QualifiedPath, to: QualifiedPath },
    /// `workspace_delete` removed a file or a directory tree.
    Deleted,
    /// `workspace_mkdir` created one or more directories.
    DirCreated,
}

/// One change, with every affected path before and after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mutation {
    pub kind: MutationKind,
    /// The affected paths as they were before the change (empty for creations). For a moved or
    /// deleted tree: the tree's root first, then every entry below it.
    pub before: Vec<Affected>,
    /// The affected paths as they are after the change (empty for deletions). For a move, entry
    /// `i` is where `before[i]` went; for directory creation, the created directories outermost
    /// first.
    pub after: Vec<Affected>,
}

/// A service that wants to hear about workspace changes.
pub trait MutationObserver: Send + Sync {
    /// Called once per change, with the mutation lock held (see the module docs).
    fn mutated(&self, change: &Mutation);
}
