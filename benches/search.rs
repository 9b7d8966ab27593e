//! Whole-tree text search compared with ripgrep on the same tree and the same rules.
//!
//! Run with `cargo bench --bench search`. The tree is a synthetic C/C++ project generated
//! deterministically under `<target>/bench-tree` on the first run and reused afterwards; set
//! `FORGEMCP_BENCH_TREE` to search another directory instead. Each query runs once to warm the cache,
//! then `forgemcp::workspace::search::search` (in process) and `rg` (a child process, so its figure
//! includes process start-up) run in turn, and the best of their runs is reported.
//!
//! The ripgrep flags reproduce the search rules: `--no-ignore` (ignore files are not applied),
//! `--hidden` with `-g '!.*/'` (dot files are searched, dot directories are not), no `-L` (links are
//! not followed), default binary handling (files with NUL are dropped; the generated binaries start
//! with NUL so no line counts before detection) and `--crlf` (`$` matches before CR LF). ripgrep does not
//! skip invalid UTF-8, so the generated non-UTF-8 files contain no match. `--count` prints matching
//! lines per file, which are summed.
//!
//! This prints figures and asserts nothing about speed; it exits with failure only when the counts
//! differ.
#![expect(clippy::print_stdout, reason = "a benchmark reports its figures on stdout")]

#[path = "common/search_runs.rs"]
mod search_runs;

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use forgemcp::workspace::search::search;
use search_runs::{Figures, Query, Timed, millis, options, ripgrep, target_dir};

/// Changing the generator must change this, so that stale trees are rebuilt.
const TREE_VERSION: &str = "v1";
const RUNS: usize = 7;

const QUERIES: [Query; 3] = [
    Query { label: "literal", query: "parse_header", regex: false, case_sensitive: true },
    Query { label: "regex", query: r"std::(vector|map)<\w+> \w+;$", regex: true, case_sensitive: true },
    Query { label: "literal -i", query: "Parse_Header", regex: false, case_sensitive: false },
];

fn main() -> ExitCode {
    let tree = match std::env::var_os("FORGEMCP_BENCH_TREE") {
        Some(tree) => PathBuf::from(tree),
        None => match generated_tree() {
            Ok(tree) => tree,
            Err(err) => {
                println!("cannot generate the benchmark tree: {err}");
                return ExitCode::FAILURE;
            }
        },
    };
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let (n_files, n_bytes) = tree_size(&tree);
    println!("tree: {} ({n_files} files, {:.1} MB), {threads} threads", tree.display(), n_bytes as f64 / 1e6);
    match search(&tree, &options(&QUERIES[0]), &|_, _| {}, &|| false) {
        Ok(outcome) => println!(
            "forgemcp visits {} files and skips {} as binary or not UTF-8",
            outcome.files_visited,
            outcome.skipped_files.len()
        ),
        Err(err) => println!("forgemcp search failed: {err}"),
    }
    println!("best of {RUNS} warm runs, alternating; rg time includes process start-up");
    println!();
    println!(
        "{:<11} {:>10} {:>10} {:>7} {:>12} {:>12} {:>10}",
        "query", "ours", "rg", "ratio", "ours count", "rg count", "identical"
    );
    let mut all_identical = true;
    for query in &QUERIES {
        let (ours, rg) = measure(|| ours(&tree, query), || ripgrep(&tree, query, threads));
        let (ours_time, ours_count) = match ours {
            Ok(figures) => figures,
            Err(err) => {
                println!("{:<11} forgemcp search failed: {err}", query.label);
                all_identical = false;
                continue;
            }
        };
        match rg {
            Ok((rg_time, rg_count)) => {
                let identical = ours_count == rg_count;
                all_identical &= identical;
                println!(
                    "{:<11} {:>10} {:>10} {:>7.2} {:>12} {:>12} {:>10}",
                    query.label,
                    millis(ours_time),
                    millis(rg_time),
                    ours_time.as_secs_f64() / rg_time.as_secs_f64(),
                    ours_count,
                    rg_count,
                    if identical { "yes" } else { "NO" },
                );
            }
            Err(err) => {
                println!("{:<11} {:>10} {:>10} (rg unavailable: {err})", query.label, millis(ours_time), "-");
            }
        }
    }
    if all_identical { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}

/// Runs each search once to warm up, then both in turn `RUNS` times, so that both see the same
/// machine load, and returns each one's fastest time with its count.
fn measure(ours: impl FnMut() -> Result<u64, String>, rg: impl FnMut() -> Result<u64, String>) -> (Figures, Figures) {
    let mut ours = Timed::new(ours);
    let mut rg = Timed::new(rg);
    for _ in 0..RUNS {
        ours.run();
        rg.run();
    }
    (ours.figures, rg.figures)
}

fn ours(tree: &Path, query: &Query) -> Result<u64, String> {
    let outcome = search(tree, &options(query), &|_, _| {}, &|| false).map_err(|err| err.to_string())?;
    Ok(outcome.matches_count)
}

/// Files and bytes under `dir`, counting everything the walk could see (dot directories included).
fn tree_size(dir: &Path) -> (u64, u64) {
    let mut res = (0, 0);
    let Ok(entries) = fs::read_dir(dir) else { return res };
    for entry in entries.flatten() {
        let Ok(file_type) = entry.file_type() else { continue };
        if file_type.is_dir() {
            let (files, bytes) = tree_size(&entry.path());
            res = (res.0 + files, res.1 + bytes);
        } else if file_type.is_file() {
            res = (res.0 + 1, res.1 + entry.metadata().map_or(0, |m| m.len()));
        }
    }
    res
}

/// The generated tree, built on first use next to the other build output.
fn generated_tree() -> io::Result<PathBuf> {
    let target = target_dir()?;
    let tree = target.join("bench-tree");
    let done = target.join(format!("bench-tree.{TREE_VERSION}.done"));
    if done.exists() && tree.is_dir() {
        return Ok(tree);
    }
    let partial = target.join("bench-tree.partial");
    for dir in [&tree, &partial] {
        if dir.exists() {
            fs::remove_dir_all(dir)?;
        }
    }
    println!("generating {} ...", tree.display());
    Generator { rng: Rng(0x5EED_F06E), root: partial.clone() }.tree()?;
    fs::rename(&partial, &tree)?;
    fs::write(done, "")?;
    Ok(tree)
}

/// SplitMix64: small, fast and the same on every platform.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const WORDS: [&str; 24] = [
    "buffer", "node", "token", "stream", "config", "index", "cache", "entry", "frame", "table", "symbol", "record",
    "packet", "queue", "graph", "scope", "module", "target", "layout", "signal", "vertex", "block", "range", "handle",
];
const TYPES: [&str; 10] =
    ["int", "Token", "Node", "std::string", "Entry", "uint32_t", "Frame", "Symbol", "Record", "double"];
const COMMENTS: [&str; 8] = [
    "keep the order stable",
    "the caller owns the buffer",
    "TODO: handle the empty case",
    "see the design notes",
    "résumé of the état: déjà vu",
    "größer als die Grenze",
    "fast path for small inputs",
    "must not throw",
];

struct Generator {
    rng: Rng,
    root: PathBuf,
}

impl Generator {
    fn tree(&mut self) -> io::Result<()> {
        for module in 0..30 {
            for sub in 0..10 {
                let dir = format!("src/mod{module:02}/part{sub}");
                for file in 0..10 {
                    let ext = self.rng.pick(&["cpp", "cpp", "cc", "h", "hpp"]);
                    let crlf = self.rng.below(10) == 0;
                    let size = 4_000 + self.rng.below(36_000);
                    let text = self.source(size, crlf);
                    self.write(&format!("{dir}/file{file}.{ext}"), text.as_bytes())?;
                }
            }
            // Dot files are searched.
            let text = self.source(2_000, false);
            self.write(&format!("src/mod{module:02}/.clang-tidy"), text.as_bytes())?;
        }
        // Dot directories hold matches that must not be found.
        for idx in 0..100 {
            let text = self.source(20_000, false);
            self.write(&format!(".git/objects/{:02x}/obj{idx}", idx % 16), text.as_bytes())?;
            self.write(&format!("build/.cache/clangd/index{idx}.idx"), text.as_bytes())?;
        }
        // Build directories are searched, except their binaries (NUL first, then matches).
        for idx in 0..40 {
            let text = self.source(10_000, false);
            self.write(&format!("build/gen/generated{idx}.cpp"), text.as_bytes())?;
            let mut binary = vec![0, 1, 2, 0];
            binary.extend_from_slice(text.as_bytes());
            self.write(&format!("build/obj/object{idx}.o"), &binary)?;
        }
        // Non-UTF-8 text without matches: skipped here, searched in vain by ripgrep.
        for idx in 0..10 {
            self.write(&format!("docs/legacy{idx}.txt"), b"caf\xe9 cr\xe8me br\xfbl\xe9e\n".repeat(200).as_slice())?;
        }
        #[cfg(unix)]
        std::os::unix::fs::symlink("src", self.root.join("src_link"))?;
        Ok(())
    }

    fn write(&self, rel_path: &str, contents: &[u8]) -> io::Result<()> {
        let path = self.root.join(rel_path);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::write(path, contents)
    }

    /// About `size` bytes of C++-looking text.
    fn source(&mut self, size: usize, crlf: bool) -> String {
        let newline = if crlf { "\r\n" } else { "\n" };
        let mut res = String::with_capacity(size + 200);
        while res.len() < size {
            let line = self.line();
            res.push_str(&line);
            res.push_str(newline);
        }
        res
    }

    fn line(&mut self) -> String {
        let rng = &mut self.rng;
        let (a, b, c) = (rng.pick(&WORDS), rng.pick(&WORDS), rng.pick(&WORDS));
        let (t, u) = (rng.pick(&TYPES), rng.pick(&TYPES));
        match rng.below(100) {
            0..=11 => format!("    {t} {a}_{b} = {c}({a}, {});", rng.below(1000)),
            12..=19 => format!("    if ({a} != nullptr) {{ return {a}->{b}_{c}(); }}"),
            20..=27 => format!("    // {}", rng.pick(&COMMENTS)),
            28..=30 => format!("    std::vector<{t}> {a}_{b};"),
            31..=32 => format!("    std::map<{t}, {u}> {a}_by_{b};"),
            33 => format!("    std::map<{a}> {b};  // {c}"),
            34 => match rng.below(4) {
                0 => format!("    parse_header({a}, {b});"),
                1 => format!("    auto {a} = Parse_Header({b});"),
                _ => format!("    {a}.parse_header_{b}();"),
            },
            35..=39 => format!("#include \"{a}/{b}.h\""),
            40..=49 => "}".to_owned(),
            50..=57 => String::new(),
            58..=69 => format!("    for (auto& {a} : {b}_{c}) {{ {a}.{c}(); }}"),
            70..=79 => format!("{t} {a}::{b}_{c}(const {u}& {a}) const {{"),
            _ => format!("        {a}_{b} += {c}.size() * {};", rng.below(64)),
        }
    }
}
