//! Qualified paths in place of host paths in the text programs print: `project/…`/`storage/…`
//! inside the managed roots, `root/…` elsewhere, with `.` and `..` resolved lexically, so every path
//! a transcript or a tool result shows is valid input. Also the names of the signals a process can
//! die of.
//!
//! Architecture invariant: pure text rewriting; the file system is never consulted.

use std::path::Path;

use crate::workspace::path::{Area, QualifiedPath, Roots, lexically_normal};

/// Rewrites absolute paths in a line of tool output to qualified paths: inside the managed roots
/// `project/…`/`storage/…`, elsewhere `root/…`, with `.` and `..` resolved lexically
/// (`/home/u/proj/tests/../a.cpp` → `project/a.cpp`), so every path a text shows is valid input.
#[derive(Debug, Clone)]
pub struct Shortener {
    roots: Roots,
    /// `(absolute root, area prefix)`, storage first, for platforms whose paths do not start with `/`.
    prefixes: Vec<(String, &'static str)>,
}

/// Characters after which a `/` starts a path, and characters that end one.
const PATH_OPENERS: &str = "\"'`([=,<";
const PATH_ENDS: &str = "\"'`)],;:<>";

impl Shortener {
    pub fn new(roots: &Roots) -> Shortener {
        let root = |path: &Path, area: Area| (path.to_string_lossy().trim_end_matches('/').to_owned(), area.prefix());
        Shortener {
            roots: roots.clone(),
            prefixes: vec![root(roots.storage(), Area::Storage), root(roots.project(), Area::Project)],
        }
    }

    pub fn shorten(&self, text: &str) -> String {
        if cfg!(windows) {
            return self.shorten_roots(text);
        }
        let mut out = String::with_capacity(text.len());
        let mut prev: Option<char> = None;
        let mut idx = 0;
        while let Some(c) = text[idx..].chars().next() {
            if c == '/' && prev.is_none_or(|p| p.is_whitespace() || PATH_OPENERS.contains(p)) {
                let end = text[idx..]
                    .find(|c: char| c.is_whitespace() || PATH_ENDS.contains(c))
                    .map_or(text.len(), |e| idx + e);
                let mut token = &text[idx..end];
                // A sentence's full stop is not part of the path.
                let trailing =
                    token.len() > 2 && token.ends_with('.') && !token.ends_with("..") && !token.ends_with("/.");
                if trailing {
                    token = &token[..token.len() - 1];
                }
                if let Some(qualified) = self.qualify_token(token) {
                    out.push_str(&qualified);
                    idx += token.len();
                    prev = qualified.chars().last();
                    continue;
                }
            }
            out.push(c);
            prev = Some(c);
            idx += c.len_utf8();
        }
        out
    }

    fn qualify_token(&self, token: &str) -> Option<String> {
        let second = token[1..].chars().next()?;
        if !(second.is_alphanumeric() || matches!(second, '.' | '_')) {
            return None;
        }
        let abs = lexically_normal(Path::new(token));
        if let Some(managed) = self.roots.qualify(&abs) {
            return Some(managed.to_string());
        }
        let text = abs.to_string_lossy();
        QualifiedPath::parse(&format!("root/{}", text.trim_start_matches('/'))).ok().map(|q| q.to_string())
    }

    /// The managed roots only, by string search (paths that do not start with `/`).
    fn shorten_roots(&self, text: &str) -> String {
        let mut res = text.to_owned();
        for (root, prefix) in &self.prefixes {
            if root.is_empty() || !res.contains(root.as_str()) {
                continue;
            }
            let mut out = String::with_capacity(res.len());
            let mut rest = res.as_str();
            while let Some(idx) = rest.find(root.as_str()) {
                let after = &rest[idx + root.len()..];
                let boundary =
                    after.chars().next().is_none_or(|c| !(c.is_alphanumeric() || matches!(c, '.' | '-' | '_' | '+')));
                out.push_str(&rest[..idx]);
                if boundary {
                    out.push_str(prefix);
                    out.push('/');
                    rest = after.strip_prefix('/').unwrap_or(after);
                } else {
                    out.push_str(root);
                    rest = after;
                }
            }
            out.push_str(rest);
            res = out;
        }
        res
    }
}

/// The name of a POSIX signal number (Linux numbering for the ones that differ).
pub fn signal_name(signal: i32) -> &'static str {
    match signal {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        5 => "SIGTRAP",
        6 => "SIGABRT",
        7 if cfg!(target_os = "linux") => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        10 if cfg!(target_os = "linux") => "SIGUSR1",
        10 => "SIGBUS",
        11 => "SIGSEGV",
        12 if cfg!(target_os = "linux") => "SIGUSR2",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        24 if cfg!(target_os = "linux") => "SIGXCPU",
        _ => "an unnamed signal",
    }
}
