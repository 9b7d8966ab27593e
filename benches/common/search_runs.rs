//! What the two search benchmarks share (`benches/search.rs`, `benches/search_index.rs`): a query,
//! ripgrep run with the search rules, a search timed at its best with a count that must not change,
//! and where the build output lives. Included by path, so neither pulls in `common/mod.rs`.

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use forgemcp::workspace::search::SearchOptions;

pub struct Query {
    pub label: &'static str,
    pub query: &'static str,
    pub regex: bool,
    pub case_sensitive: bool,
}

/// The search options of `query`, at most 100 lines kept.
pub fn options(query: &Query) -> SearchOptions {
    SearchOptions {
        query: query.query.to_owned(),
        regex: query.regex,
        case_sensitive: query.case_sensitive,
        extensions: None,
        max_matches: 100,
        offset: 0,
        exclude: Vec::new(),
        excluded_dirs: Vec::new(),
    }
}

/// ripgrep's count of matching lines under `tree`, with flags that reproduce the search rules
/// (`benches/search.rs` explains each).
#[expect(clippy::disallowed_methods, reason = "the benchmark runs ripgrep itself as the reference")]
pub fn ripgrep(tree: &Path, query: &Query, threads: usize) -> Result<u64, String> {
    let mut command = std::process::Command::new("rg");
    command.args(["--no-config", "--no-ignore", "--hidden", "--glob", "!.*/", "--crlf", "--count", "--no-messages"]);
    command.arg("--threads").arg(threads.to_string());
    if !query.regex {
        command.arg("--fixed-strings");
    }
    command.arg(if query.case_sensitive { "--case-sensitive" } else { "--ignore-case" });
    command.arg("--regexp").arg(query.query).arg("--").arg(tree);
    let output = command.stderr(std::process::Stdio::null()).output().map_err(|err| err.to_string())?;
    // Exit status 1 means "no match"; 2 means an error, which `--no-messages` keeps quiet about.
    if output.status.code() == Some(2) {
        return Err("rg reported an error".to_owned());
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    stdout.lines().try_fold(0, |sum, line| {
        let count = line.rsplit_once(':').and_then(|(_, count)| count.parse::<u64>().ok());
        count.map(|count| sum + count).ok_or_else(|| format!("unexpected rg output line `{line}`"))
    })
}

/// A search's best time so far and its count, or why its runs ended.
pub type Figures = Result<(Duration, u64), String>;

/// A search, its best time so far and its count; an error or a changed count ends its runs.
pub struct Timed<F> {
    search: F,
    pub figures: Figures,
}

impl<F: FnMut() -> Result<u64, String>> Timed<F> {
    /// Runs the search once (the warm-up).
    pub fn new(mut search: F) -> Timed<F> {
        let figures = search().map(|count| (Duration::MAX, count));
        Timed { search, figures }
    }

    pub fn run(&mut self) {
        let Ok((best, expected)) = self.figures else { return };
        let started = Instant::now();
        let res = (self.search)();
        let elapsed = started.elapsed();
        self.figures = match res {
            Ok(count) if count == expected => Ok((best.min(elapsed), expected)),
            Ok(count) => Err(format!("count changed between runs: {expected} then {count}")),
            Err(err) => Err(err),
        };
    }
}

pub fn millis(duration: Duration) -> String {
    format!("{:.1} ms", duration.as_secs_f64() * 1e3)
}

/// `<target>` from the bench executable's path `<target>/<profile>/deps/<bench>-<hash>`.
pub fn target_dir() -> io::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    exe.ancestors()
        .nth(3)
        .map(Path::to_path_buf)
        .ok_or_else(|| io::Error::other("cannot locate the target directory from the bench executable"))
}
