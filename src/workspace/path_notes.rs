//! The path-note hook: services that know which files a build compiles (CMake's codemodel) say in
//! a created, moved, deleted or reverted file's result text what the change means for the build
//! (`project/src/new.cpp is compiled by no target; add it to core at project/CMakeLists.txt:5`), and
//! clangd says which of its configurations the change withdrew.
//! They implement [`PathNotes`] and register with
//! [`WorkspaceService::add_path_notes`](crate::workspace::WorkspaceService::add_path_notes).
//!
//! Architecture invariant: notes are computed after the operation, outside the workspace lock;
//! they never change files and never fail the operation. The workspace knows nothing about who
//! answers.

use crate::workspace::journal::revert::RevertedPath;
use crate::workspace::path::QualifiedPath;

/// The change a note is asked about.
#[derive(Debug, Clone, Copy)]
pub enum PathChange<'a> {
    /// `workspace_write_file` created a file.
    Created(&'a QualifiedPath),
    /// `workspace_move` moved a file or a tree.
    Moved { from: &'a QualifiedPath, to: &'a QualifiedPath },
    /// `workspace_delete` removed a file or a tree.
    Deleted(&'a QualifiedPath),
    /// `workspace_revert` restored these paths (each with what the revert did to it).
    Reverted(&'a [RevertedPath]),
}

/// A service that adds lines to the result text of file creations, moves, deletions and reverts.
pub trait PathNotes: Send + Sync {
    /// The lines for this change (none when it has nothing to say).
    fn notes(&self, change: PathChange<'_>) -> Vec<String>;
}
