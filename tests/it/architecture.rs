//! The source tree's own rules, read from `src/`: the configuration arrow points one way, and files
//! stay small.
//!
//! - No service imports `config` or `cli`, nor `app` (the composition root, where `ServeConfig`
//!   lives): the services define the option types they take (`toolchain::options`,
//!   `cmake::options`, `admin::options`), `config/` builds them, and `app.rs` needs neither
//!   `config` nor `cli`. Only `src/config/`, `src/cli.rs` and `src/main.rs` may name them.
//! - No `src/**/*.rs` file is longer than [`MAX_LINES`].

use std::path::{Path, PathBuf};

/// The longest a source file may be.
const MAX_LINES: usize = 600;

/// Where the command line may be named: its parser, its validation, and the binary.
fn may_import_config(rel: &str) -> bool {
    rel.starts_with("src/config/") || rel == "src/cli.rs" || rel == "src/main.rs"
}

/// Every `.rs` file below `dir`, as (path relative to the crate, contents).
fn sources(root: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
    let mut entries: Vec<PathBuf> =
        std::fs::read_dir(dir).expect("read a source directory").map(|entry| entry.expect("entry").path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            sources(root, &path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            let rel = path.strip_prefix(root).expect("below the crate").to_string_lossy().replace('\\', "/");
            out.push((rel, std::fs::read_to_string(&path).expect("read a source file")));
        }
    }
}

fn all_sources() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    sources(root, &root.join("src"), &mut out);
    assert!(out.len() > 100, "the source tree was not found: {} files", out.len());
    out
}

/// The lines of `text` that name the `config`, `cli` or `app` module of this crate:
/// `crate::config…`, `crate::cli…`, `crate::app…`, or one of them inside a `crate::{…}` group.
fn config_imports(text: &str) -> Vec<String> {
    let names = |path: &str| {
        path.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .any(|word| matches!(word.split("::").next(), Some("config" | "cli" | "app")))
    };
    let mut res = Vec::new();
    for (idx, line) in text.lines().enumerate() {
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            let hit = if let Some(group) = rest.strip_prefix('{') {
                names(&group[..group.find('}').unwrap_or(group.len())])
            } else {
                names(rest.split(|c: char| c.is_whitespace() || c == ';').next().unwrap_or(""))
            };
            if hit {
                res.push(format!("{}: {}", idx + 1, line.trim()));
                break;
            }
        }
    }
    res
}

#[test]
fn the_detector_sees_every_form_of_import() {
    for line in [
        "use crate::config::AdminEnv;",
        "use crate::cli;",
        "    let args = crate::cli::Args::try_parse_from(argv);",
        "use crate::{cli, process};",
        "use crate::{process::ProcessService, config::ServeConfig};",
        "use crate::app::ServeConfig;",
    ] {
        assert_eq!(config_imports(line).len(), 1, "{line}");
    }
    for line in [
        "use crate::cmake::options::CmakeOptions;",
        "use crate::client::X;",
        "// see config.rs",
        "use crate::{clangd, call};",
        "use crate::admin::options::AdminEnv;",
    ] {
        assert!(config_imports(line).is_empty(), "{line}");
    }
}

#[test]
fn no_service_imports_config_or_cli() {
    let offenders: Vec<String> = all_sources()
        .iter()
        .filter(|(rel, _)| !may_import_config(rel))
        .flat_map(|(rel, text)| config_imports(text).into_iter().map(move |line| format!("{rel}:{line}")))
        .collect();
    assert!(
        offenders.is_empty(),
        "services take their options from their own modules (config builds them), never from config, cli or app:\n{}",
        offenders.join("\n")
    );
}

#[test]
fn no_source_file_is_longer_than_600_lines() {
    let problems: Vec<String> = all_sources()
        .iter()
        .map(|(rel, text)| (rel, text.lines().count()))
        .filter(|&(_, lines)| lines > MAX_LINES)
        .map(|(rel, lines)| format!("{rel}: {lines} lines (at most {MAX_LINES})"))
        .collect();
    assert!(problems.is_empty(), "split long files by job:\n{}", problems.join("\n"));
}
