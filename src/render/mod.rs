//! Plain-English text for tool `content` and Markdown for resources: pure functions from domain
//! types to `String`.
//!
//! Architecture invariant: text never contains Markdown formatting, JSON or result-resource links;
//! Markdown is produced only for resources.

pub mod clangd;
pub mod clangd_note;
pub mod cmake;
pub mod debug;
pub mod excerpt;
pub mod markdown;
pub mod mutation;
pub mod process;
pub mod quality;
pub mod search;
pub mod toolchain;
pub mod tree;
pub mod workspace;
