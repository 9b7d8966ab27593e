//! The search index (issue 33) against ripgrep, on a real tree and on four copies of it side by
//! side, printing every figure with its ratio from the same run.
//!
//! Run with `FORGEMCP_BENCH_TREE=<tree> cargo bench --bench search_index` (docs/performance.md uses
//! DuckDB at commit 044a04a7). `FORGEMCP_BENCH_COPIES` sets the copies of the large corpus (default
//! 4; 1 leaves it out): hard links under `<target>/bench-index/`, made once. The index reads and
//! posts one content once, so identical copies cost about what one does: `FORGEMCP_BENCH_DISTINCT=1`
//! also runs as many copies whose every file is distinct (written with one more line,
//! `// distinct copy <n>`, that no query matches), which is what a tree that large costs.
//! `FORGEMCP_BENCH_COLD=1` also times the literal query with the page cache dropped before each run
//! (needs root; it writes `/proc/sys/vm/drop_caches`).
//!
//! For each corpus: ripgrep's best of three scans (the reference of the build time); the best of
//! three builds of the index, each from an empty storage root (the last under
//! `<target>/bench-index/storage-<n>`) until it reports `ready` (its size against the searched
//! bytes); a restart on the index file left behind; then each query through the index
//! (`search_indexed`, as the server calls it), through today's scan (`search`, no index) and with
//! `rg` (a child process, so its figure includes process start-up), alternating, best of the warm
//! runs. ripgrep's flags reproduce the search rules as in `benches/search.rs`.
//!
//! Each corpus runs in a child process of its own, after two other children: one runs only today's
//! scans of the same queries, as often as the corpus does (each once, then `RUNS` times), and one
//! builds the index once (from an empty storage root) and runs only the indexed queries, as often.
//! The first one's peak RSS is today's peak on this bench; the second one's is the peak while
//! building and querying through the index, compared with it. (The corpus's own process also scans
//! and builds three times, so its peak is neither.) All tune the allocator as the server does
//! (`allocator::tune_malloc`); the server gives freed memory back only after a second without
//! heavy calls, so searches one after another, as here, keep theirs.
//!
//! This prints figures and asserts nothing about speed; it exits with failure only when counts
//! differ or an indexed search did not answer from a ready index.
#![expect(clippy::print_stdout, reason = "a benchmark reports its figures on stdout")]

#[path = "common/search_runs.rs"]
mod search_runs;

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use forgemcp::workspace::search::index::{IndexOptions, IndexStatus, SearchIndex};
use forgemcp::workspace::search::{search, search_indexed};
use search_runs::{Query, Timed, millis, options, ripgrep, target_dir};

const RUNS: usize = 5;

/// Builds of the index from an empty storage root; the best one is compared with rg's best scan.
const BUILDS: usize = 3;
const COLD_RUNS: usize = 3;

/// mcpbench's three queries, a rare literal, and a regex whose matches share no literal.
const QUERIES: [Query; 5] = [
    Query { label: "literal", query: "unique_ptr", regex: false, case_sensitive: true },
    Query { label: "regex", query: r"(unique|shared)_ptr<[A-Za-z_:]+>", regex: true, case_sensitive: true },
    Query { label: "no match", query: "ForgeMCP_no_such_token_7f3a", regex: false, case_sensitive: true },
    Query { label: "rare", query: "PhysicalHashAggregate", regex: false, case_sensitive: true },
    Query { label: "no literal", query: r"\w+\s*<\s*\d+\s*>", regex: true, case_sensitive: true },
];

/// Which part of the benchmark a process runs: each corpus, and today's scans of it alone, run in
/// a process of their own, so that each peak RSS is that part's own.
const ROLE: &str = "FORGEMCP_BENCH_ROLE";

fn main() -> ExitCode {
    forgemcp::allocator::tune_malloc();
    let role = std::env::var(ROLE).ok();
    let result = match role.as_deref() {
        Some("scans") => child_env("FORGEMCP_BENCH_CORPUS").and_then(|tree| scans_only(Path::new(&tree))),
        Some("indexed") => indexed_only(),
        Some("corpus") => corpus_child(),
        _ => orchestrate(),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(err) => {
            println!("benchmark failed: {err}");
            ExitCode::FAILURE
        }
    }
}

/// Runs each corpus (one copy of the tree, then the copies) in a child process, after a child that
/// runs only today's scans of it for the reference peak RSS.
fn orchestrate() -> Result<bool, String> {
    let Some(tree) = std::env::var_os("FORGEMCP_BENCH_TREE").map(PathBuf::from) else {
        println!("set FORGEMCP_BENCH_TREE to a C/C++ tree (docs/performance.md: DuckDB at 044a04a7)");
        return Ok(false);
    };
    let copies: usize = std::env::var("FORGEMCP_BENCH_COPIES").ok().and_then(|n| n.parse().ok()).unwrap_or(4);
    let cold = std::env::var("FORGEMCP_BENCH_COLD").is_ok_and(|v| v == "1");
    let distinct = std::env::var("FORGEMCP_BENCH_DISTINCT").is_ok_and(|v| v == "1");
    let work = target_dir().map_err(|err| err.to_string())?.join("bench-index");
    let tree = tree.canonicalize().map_err(|err| format!("{}: {err}", tree.display()))?;
    let mut corpora = vec![(tree.clone(), work.join("storage-1"), "1 copy".to_owned(), cold)];
    if copies > 1 {
        let big = copied(&tree, &work.join(format!("x{copies}")), copies, false).map_err(|err| err.to_string())?;
        corpora.push((big, work.join(format!("storage-{copies}")), format!("{copies} copies"), false));
    }
    if copies > 1 && distinct {
        let dir = work.join(format!("x{copies}-distinct"));
        let big = copied(&tree, &dir, copies, true).map_err(|err| err.to_string())?;
        let label = format!("{copies} distinct copies");
        corpora.push((big, work.join(format!("storage-{copies}-distinct")), label, false));
    }
    let mut ok = true;
    for (tree, storage, label, cold) in corpora {
        let (_, scans) = run_child(&[(ROLE, "scans"), ("FORGEMCP_BENCH_CORPUS", &tree.to_string_lossy())], true)?;
        let peak =
            scans.lines().find_map(|line| line.strip_prefix("PEAK ")).ok_or("the scans-only run printed no peak")?;
        let peak_storage = storage.with_extension("peak");
        let indexed_vars = [
            (ROLE, "indexed"),
            ("FORGEMCP_BENCH_CORPUS", &tree.to_string_lossy()),
            ("FORGEMCP_BENCH_STORAGE", &peak_storage.to_string_lossy()),
        ];
        let (_, indexed) = run_child(&indexed_vars, true)?;
        let indexed_peak = indexed
            .lines()
            .find_map(|line| line.strip_prefix("PEAK "))
            .ok_or("the indexed-only run printed no peak")?;
        let vars = [
            (ROLE, "corpus"),
            ("FORGEMCP_BENCH_CORPUS", &tree.to_string_lossy()),
            ("FORGEMCP_BENCH_STORAGE", &storage.to_string_lossy()),
            ("FORGEMCP_BENCH_LABEL", &label),
            ("FORGEMCP_BENCH_COLD", if cold { "1" } else { "0" }),
            ("FORGEMCP_BENCH_SCANS_PEAK", peak),
            ("FORGEMCP_BENCH_INDEXED_PEAK", indexed_peak),
        ];
        ok &= run_child(&vars, false)?.0;
    }
    Ok(ok)
}

/// Runs this benchmark again with `vars`: whether it succeeded, and its stdout when `capture` (a
/// captured run must succeed); else its stdout is shown as it comes.
#[expect(clippy::disallowed_methods, reason = "the benchmark runs its own parts as child processes")]
fn run_child(vars: &[(&str, &str)], capture: bool) -> Result<(bool, String), String> {
    let exe = std::env::current_exe().map_err(|err| err.to_string())?;
    let mut command = std::process::Command::new(exe);
    command.arg("--bench").envs(vars.iter().copied());
    if !capture {
        command.stdout(std::process::Stdio::inherit());
    }
    let output = command.output().map_err(|err| err.to_string())?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    if capture && !output.status.success() {
        return Err(format!("a part of the benchmark failed ({}): {stdout}", output.status));
    }
    Ok((output.status.success(), stdout))
}

fn child_env(name: &str) -> Result<String, String> {
    std::env::var(name).map_err(|_| format!("{name} is not set"))
}

/// Today's scans alone, as often as a corpus runs them: each query once, then `RUNS` times each;
/// prints the process's peak RSS.
fn scans_only(tree: &Path) -> Result<bool, String> {
    for _ in 0..=RUNS {
        for query in &QUERIES {
            scan(tree, query)?;
        }
    }
    println!("PEAK {:.1}", peak_rss_mib());
    Ok(true)
}

/// One build of the index from an empty storage root, then only the indexed queries, as often as a
/// corpus runs them; prints the process's peak RSS.
fn indexed_only() -> Result<bool, String> {
    let tree = PathBuf::from(child_env("FORGEMCP_BENCH_CORPUS")?);
    let storage = PathBuf::from(child_env("FORGEMCP_BENCH_STORAGE")?);
    let _ = fs::remove_dir_all(&storage);
    let index = SearchIndex::start(tree.clone(), &storage, IndexOptions::default());
    until_ready(&index)?;
    for query in &QUERIES {
        for _ in 0..=RUNS {
            indexed(&tree, &index, query)?;
        }
    }
    drop(index);
    let _ = fs::remove_dir_all(&storage);
    println!("PEAK {:.1}", peak_rss_mib());
    Ok(true)
}

fn corpus_child() -> Result<bool, String> {
    let tree = PathBuf::from(child_env("FORGEMCP_BENCH_CORPUS")?);
    let storage = PathBuf::from(child_env("FORGEMCP_BENCH_STORAGE")?);
    let scans_peak: f64 = child_env("FORGEMCP_BENCH_SCANS_PEAK")?.parse().map_err(|_| "a bad scans peak")?;
    let indexed_peak: f64 = child_env("FORGEMCP_BENCH_INDEXED_PEAK")?.parse().map_err(|_| "a bad indexed peak")?;
    let cold = child_env("FORGEMCP_BENCH_COLD")? == "1";
    corpus(&tree, &storage, &child_env("FORGEMCP_BENCH_LABEL")?, cold, (indexed_peak, scans_peak))
}

/// All figures of one corpus; `false` when an answer differed or did not come from the index.
/// `peaks`: the peak RSS of the indexed-only and of the scans-only processes.
fn corpus(tree: &Path, storage: &Path, label: &str, cold: bool, peaks: (f64, f64)) -> Result<bool, String> {
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let (n_files, n_bytes) = searched_size(tree);
    println!("== {label}: {} ({n_files} files, {:.1} MB searched), {threads} threads", tree.display(), mb(n_bytes));
    let rg_scan = best(3, || ripgrep(tree, &QUERIES[0], threads).map(|_| ()))?;
    for query in &QUERIES {
        scan(tree, query)?;
    }
    println!("peak RSS after scans: {:.1} MiB", peak_rss_mib());

    // Best of three builds, as the rg scan is best of three; each from an empty storage root.
    let mut builds = Vec::new();
    for i in 0..BUILDS {
        let dir = if i + 1 == BUILDS { storage.to_path_buf() } else { storage.with_extension(format!("build{i}")) };
        let _ = fs::remove_dir_all(&dir);
        let index = SearchIndex::start(tree.to_path_buf(), &dir, IndexOptions::default());
        builds.push(until_ready(&index)?);
        saved_size(&dir.join(".index/project.idx"))?;
        drop(index);
    }
    let build = builds.iter().copied().min().unwrap_or_default();
    let size = saved_size(&storage.join(".index/project.idx"))?;
    let each: Vec<String> = builds.iter().map(|b| millis(*b)).collect();
    println!(
        "build: best of {BUILDS} {} ({}; {:.2}× one rg scan of {}); index {:.1} MB = {:.1}% of the searched bytes; peak RSS {:.1} MiB",
        millis(build),
        each.join(", "),
        ratio(build, rg_scan),
        millis(rg_scan),
        mb(size),
        100.0 * size as f64 / n_bytes as f64,
        peak_rss_mib(),
    );
    for i in 0..BUILDS - 1 {
        let _ = fs::remove_dir_all(storage.with_extension(format!("build{i}")));
    }
    let index = SearchIndex::start(tree.to_path_buf(), storage, IndexOptions::default());
    let restart = until_ready(&index)?;
    println!("restart on the index file: ready in {}", millis(restart));

    println!("best of {RUNS} warm runs, alternating; rg time includes process start-up");
    println!(
        "{:<11} {:>10} {:>10} {:>10} {:>8} {:>8} {:>9} {:>9}",
        "query", "indexed", "scan", "rg", "idx/rg", "scan/rg", "count", "rg count"
    );
    let mut ok = true;
    for query in &QUERIES {
        let mut indexed = Timed::new(|| indexed(tree, &index, query));
        let mut scanned = Timed::new(|| scan(tree, query));
        let mut rg = Timed::new(|| ripgrep(tree, query, threads));
        for _ in 0..RUNS {
            indexed.run();
            scanned.run();
            rg.run();
        }
        let (indexed, scanned, rg) = (indexed.figures?, scanned.figures?, rg.figures?);
        let identical = indexed.1 == rg.1 && scanned.1 == rg.1;
        ok &= identical;
        println!(
            "{:<11} {:>10} {:>10} {:>10} {:>7.3}× {:>7.2}× {:>9} {:>9}{}",
            query.label,
            millis(indexed.0),
            millis(scanned.0),
            millis(rg.0),
            ratio(indexed.0, rg.0),
            ratio(scanned.0, rg.0),
            indexed.1,
            rg.1,
            if identical { "" } else { "  COUNTS DIFFER" },
        );
    }
    if cold {
        let query = &QUERIES[0];
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        for _ in 0..COLD_RUNS {
            ours.push(timed_cold(|| indexed(tree, &index, query).map(|_| ()))?);
            theirs.push(timed_cold(|| ripgrep(tree, query, threads).map(|_| ()))?);
        }
        let (ours, theirs) = (median(ours), median(theirs));
        println!(
            "cold literal (page cache dropped before each run, median of {COLD_RUNS}): indexed {}, rg {}, {:.3}×",
            millis(ours),
            millis(theirs),
            ratio(ours, theirs)
        );
    }
    let (indexed_peak, scans_peak) = peaks;
    println!(
        "peak RSS building the index once and querying through it: {indexed_peak:.1} MiB = {:.2}× today's {scans_peak:.1} \
         MiB (each in a process of its own running only that, the same queries as often); this process, which also \
         scans and builds three times: {:.1} MiB",
        indexed_peak / scans_peak,
        peak_rss_mib()
    );
    println!();
    Ok(ok)
}

/// Waits until the index is ready (a search would use it); its time from now.
fn until_ready(index: &Arc<SearchIndex>) -> Result<Duration, String> {
    let started = Instant::now();
    loop {
        match index.status() {
            IndexStatus::Ready => return Ok(started.elapsed()),
            IndexStatus::Building => std::thread::sleep(Duration::from_millis(2)),
            IndexStatus::Scanning(reason) => return Err(format!("the index is not available: {reason}")),
        }
    }
}

fn scan(tree: &Path, query: &Query) -> Result<u64, String> {
    let outcome = search(tree, &options(query), &|_, _| {}, &|| false).map_err(|err| err.to_string())?;
    Ok(outcome.matches_count)
}

fn indexed(tree: &Path, index: &SearchIndex, query: &Query) -> Result<u64, String> {
    let (outcome, status) =
        search_indexed(tree, &options(query), Some(index), &|_, _| {}, &|| false).map_err(|err| err.to_string())?;
    match status {
        IndexStatus::Ready => Ok(outcome.matches_count),
        other => Err(format!("the indexed search answered with `{other}`")),
    }
}

fn best(runs: usize, mut f: impl FnMut() -> Result<(), String>) -> Result<Duration, String> {
    let mut best = Duration::MAX;
    for _ in 0..runs {
        let started = Instant::now();
        f()?;
        best = best.min(started.elapsed());
    }
    Ok(best)
}

fn timed_cold(f: impl FnOnce() -> Result<(), String>) -> Result<Duration, String> {
    fs::write("/proc/sys/vm/drop_caches", "3").map_err(|err| format!("cannot drop the page cache: {err}"))?;
    let started = Instant::now();
    f()?;
    Ok(started.elapsed())
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort_unstable();
    times[times.len() / 2]
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64()
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}

/// The size of the index file, saved under its name just after the index became ready.
fn saved_size(path: &Path) -> Result<u64, String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match fs::metadata(path) {
            Ok(meta) => return Ok(meta.len()),
            Err(err) if Instant::now() > deadline => return Err(format!("{}: {err}", path.display())),
            Err(_) => std::thread::sleep(Duration::from_millis(1)),
        }
    }
}

/// The process's peak resident set so far (`VmHWM`; 0 where `/proc` does not tell).
fn peak_rss_mib() -> f64 {
    let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse::<f64>().ok());
    kib.unwrap_or(0.0) / 1024.0
}

/// Regular files (and their bytes) a search of `dir` would open: dot-directories and links left out.
fn searched_size(dir: &Path) -> (u64, u64) {
    let mut res = (0, 0);
    let Ok(entries) = fs::read_dir(dir) else { return res };
    for entry in entries.flatten() {
        let Ok(file_type) = entry.file_type() else { continue };
        if file_type.is_dir() && !entry.file_name().as_encoded_bytes().starts_with(b".") {
            let (files, bytes) = searched_size(&entry.path());
            res = (res.0 + files, res.1 + bytes);
        } else if file_type.is_file() {
            res = (res.0 + 1, res.1 + entry.metadata().map_or(0, |m| m.len()));
        }
    }
    res
}

/// `copies` copies of `tree` side by side under `dir` (made once): hard links, or with `distinct`
/// files whose copy `n` ends with one more line, `// distinct copy <n>`.
fn copied(tree: &Path, dir: &Path, copies: usize, distinct: bool) -> io::Result<PathBuf> {
    let done = dir.with_extension("done");
    if !(done.exists() && dir.is_dir()) {
        if dir.exists() {
            fs::remove_dir_all(dir)?;
        }
        for copy in 0..copies {
            let suffix = distinct.then(|| format!("\n// distinct copy {copy}\n"));
            copy_tree(tree, &dir.join(format!("copy{copy}")), suffix.as_deref())?;
        }
        fs::write(&done, "")?;
    }
    dir.canonicalize()
}

/// Hard links of the files below `from` (or with `suffix`, copies with it appended) below `to`.
fn copy_tree(from: &Path, to: &Path, suffix: Option<&str>) -> io::Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let (source, target) = (entry.path(), to.join(entry.file_name()));
        let file_type = entry.file_type()?;
        if file_type.is_dir() {
            copy_tree(&source, &target, suffix)?;
        } else if let (true, Some(suffix)) = (file_type.is_file(), suffix) {
            fs::write(&target, [fs::read(&source)?, suffix.as_bytes().to_vec()].concat())?;
        } else if file_type.is_file() {
            fs::hard_link(&source, &target)?;
        } else if file_type.is_symlink() {
            #[cfg(unix)]
            std::os::unix::fs::symlink(fs::read_link(&source)?, &target)?;
        }
    }
    Ok(())
}
