//! Plain-English text for tool `content` and Markdown for resources: pure functions from domain
//! types to `String`.
//!
//! Architecture invariant: text never contains Markdown formatting, JSON or result-resource links;
//! Markdown is produced only for resources.

pub mod acceleration;
pub mod build_diagnostics;
pub mod clangd;
pub mod clangd_note;
pub mod cmake;
pub mod cmake_selection;
pub mod cmake_targets;
pub mod debug;
pub mod diagnostic_line;
pub mod excerpt;
pub mod journal;
pub mod markdown;
pub mod mutation;
pub mod process;
pub mod quality;
pub mod search;
pub mod toolchain;
pub mod tree;
pub mod workspace;

/// `1234567` → `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut res = String::new();
    for (idx, c) in digits.chars().enumerate() {
        if idx > 0 && (digits.len() - idx).is_multiple_of(3) {
            res.push(',');
        }
        res.push(c);
    }
    res
}
