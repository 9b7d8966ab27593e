//! `quality_tidy` through the whole MCP surface against clang-tidy run directly on the same
//! translation units with the same compilation database and the same parallelism (one process per
//! core, as `run-clang-tidy` does), and `quality_format` on a tree against one `clang-format -i` of
//! the same files, in the same run.
//!
//! Run with `cargo bench --bench quality`. It needs cmake, ninja, a C++ compiler, clang-tidy and
//! clang-format on `PATH` (it says so and exits when one is missing). It configures the `Release`
//! profile of a temporary copy of `examples/cpp-acceptance-project`, lets the clangd session that
//! configuring starts finish its index, then alternates the tool and the direct runs so both see the
//! same machine state. The tidy goal is a tool time within 1.1× of the direct runs. For formatting,
//! the tree holds copies of the project's sources re-indented by 3 spaces, restored before every
//! run. This prints figures and asserts nothing about speed.
#![expect(clippy::print_stdout, reason = "a benchmark reports its figures on stdout")]

mod common;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const RUNS: usize = 5;
/// Copies of the project's sources in the formatting tree.
const FORMAT_COPIES: usize = 20;

fn main() -> ExitCode {
    common::run("quality", &["cmake", "ninja", "c++", "clang-tidy", "clang-format"], run())
}

async fn run() -> Result<(), String> {
    let served = common::serve_acceptance_copy().await?;
    let configured = served.call("cmake_configure", json!({ "profiles": ["Release"] })).await?;
    if !common::succeeded(&configured) {
        return Err(format!("cmake_configure failed: {configured:?}"));
    }
    served.call("clangd_workspace_symbols", json!({ "query": "main", "timeout": 300 })).await?;
    let build_dir = served.roots.storage().join("build/cmake-Release");
    let units = database_units(&build_dir.join("compile_commands.json"))?;
    let scratch = served.roots.storage().join("bench-exports");
    std::fs::create_dir_all(&scratch).map_err(|e| e.to_string())?;
    let jobs = std::thread::available_parallelism().map_or(2, usize::from);

    let mut tool = Vec::new();
    let mut raw = Vec::new();
    let mut checked = 0;
    for _ in 0..RUNS {
        let started = Instant::now();
        let res =
            served.call("quality_tidy", json!({ "configurations": ["Release"], "max_diagnostics": 100000 })).await?;
        tool.push(started.elapsed());
        let value = res.structured_content.clone().unwrap_or(Value::Null);
        if res.is_error == Some(true) || !value["failures"].as_array().is_some_and(Vec::is_empty) {
            return Err(format!("quality_tidy failed: {res:?}"));
        }
        checked = value["files_checked"].as_u64().unwrap_or(0);
        raw.push(raw_tidy(&served.project, &build_dir, &units, &scratch, jobs)?);
    }
    println!(
        "quality_tidy on examples/cpp-acceptance-project (Release, {} translation units, {jobs} at a time), same run:",
        units.len()
    );
    report("quality_tidy (MCP tool)", "clang-tidy run directly", &mut tool, &mut raw, "goal ≤ 1.1");
    if checked != units.len() as u64 {
        println!("    note: the tool checked {checked} units, the direct runs {}", units.len());
    }

    // Formatting: a tree of re-indented copies, restored before each run.
    let tree = served.project.join("format-bench");
    let sources = format_sources(&served.project, &tree)?;
    let mut tool = Vec::new();
    let mut raw = Vec::new();
    let mut check = Vec::new();
    for _ in 0..RUNS {
        restore(&sources)?;
        let started = Instant::now();
        let res = served.call("quality_format", json!({ "path": "format-bench", "max_files": 100000 })).await?;
        check.push(started.elapsed());
        if res.is_error == Some(true) {
            return Err(format!("quality_format failed: {res:?}"));
        }
        let started = Instant::now();
        let res = served
            .call("quality_format", json!({ "path": "format-bench", "apply": true, "max_files": 100000 }))
            .await?;
        tool.push(started.elapsed());
        if res.is_error == Some(true) {
            return Err(format!("quality_format failed: {res:?}"));
        }
        restore(&sources)?;
        raw.push(raw_format(&served.project, &sources)?);
    }
    println!("quality_format on a tree of {} files, same run:", sources.len());
    report("quality_format apply (MCP tool)", "one clang-format -i", &mut tool, &mut raw, "for comparison");
    check.sort();
    println!("    quality_format check only:           median {:8.1} ms", ms(check[check.len() / 2]));
    println!("  (the machine may be shared with other work: compare ratios of one run, not absolute times)");
    Ok(())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn report(tool_label: &str, raw_label: &str, tool: &mut [Duration], raw: &mut [Duration], goal: &str) {
    tool.sort();
    raw.sort();
    let (tool_median, raw_median) = (tool[tool.len() / 2], raw[raw.len() / 2]);
    println!("    {tool_label:<36} median {:8.1} ms, min {:8.1} ms", ms(tool_median), ms(tool[0]));
    println!("    {raw_label:<36} median {:8.1} ms, min {:8.1} ms", ms(raw_median), ms(raw[0]));
    println!("    ratio of medians: {:.3} ({goal})", tool_median.as_secs_f64() / raw_median.as_secs_f64());
}

/// The absolute source files of a compilation database.
fn database_units(database: &Path) -> Result<Vec<PathBuf>, String> {
    let text = std::fs::read_to_string(database).map_err(|e| e.to_string())?;
    let entries: Vec<Value> = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let mut res: Vec<PathBuf> = Vec::new();
    for entry in entries {
        let dir = Path::new(entry["directory"].as_str().unwrap_or_default());
        let file = dir.join(entry["file"].as_str().unwrap_or_default());
        if !res.contains(&file) {
            res.push(file);
        }
    }
    Ok(res)
}

/// clang-tidy on every unit with the tool's flags, `jobs` processes at a time.
#[expect(clippy::disallowed_methods, reason = "the benchmark runs clang-tidy itself as the reference")]
fn raw_tidy(cwd: &Path, build: &Path, units: &[PathBuf], scratch: &Path, jobs: usize) -> Result<Duration, String> {
    let queue = Mutex::new(units.iter().enumerate());
    let started = Instant::now();
    let failures: Vec<String> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..jobs)
            .map(|_| {
                scope.spawn(|| {
                    let mut failures = Vec::new();
                    while let Some((idx, unit)) = queue.lock().map(|mut q| q.next()).unwrap_or(None) {
                        let export = scratch.join(format!("raw-{idx}.yaml"));
                        let output = std::process::Command::new("clang-tidy")
                            .arg("-p")
                            .arg(build)
                            .arg("--quiet")
                            .arg(format!("--export-fixes={}", export.display()))
                            .arg(unit)
                            .current_dir(cwd)
                            .output();
                        let _ = std::fs::remove_file(&export);
                        if let Err(err) = output {
                            failures.push(err.to_string());
                        }
                    }
                    failures
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().unwrap_or_default()).collect()
    });
    let elapsed = started.elapsed();
    match failures.first() {
        Some(err) => Err(format!("clang-tidy did not start: {err}")),
        None => Ok(elapsed),
    }
}

/// Writes `FORMAT_COPIES` copies of the project's C++ sources, each line indented by 3 more spaces,
/// and returns `(path, text)` of each.
fn format_sources(project: &Path, tree: &Path) -> Result<Vec<(PathBuf, String)>, String> {
    let mut originals = Vec::new();
    for dir in ["src", "app", "tests", "analysis", "include/fixture"] {
        for entry in std::fs::read_dir(project.join(dir)).map_err(|e| e.to_string())?.flatten() {
            let path = entry.path();
            if matches!(path.extension().and_then(|e| e.to_str()), Some("cpp" | "hpp")) {
                originals.push(path);
            }
        }
    }
    let mut res = Vec::new();
    for copy in 0..FORMAT_COPIES {
        let dir = tree.join(format!("copy{copy}"));
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        for (idx, original) in originals.iter().enumerate() {
            let text = std::fs::read_to_string(original).map_err(|e| e.to_string())?;
            let messy: String = text.lines().map(|line| format!("   {line}\n")).collect();
            let name = original.file_name().and_then(|n| n.to_str()).unwrap_or("file.cpp");
            res.push((dir.join(format!("{idx}-{name}")), messy));
        }
    }
    Ok(res)
}

fn restore(sources: &[(PathBuf, String)]) -> Result<(), String> {
    for (path, text) in sources {
        std::fs::write(path, text).map_err(|e| e.to_string())?;
    }
    Ok(())
}

#[expect(clippy::disallowed_methods, reason = "the benchmark runs clang-format itself as the reference")]
fn raw_format(cwd: &Path, sources: &[(PathBuf, String)]) -> Result<Duration, String> {
    let started = Instant::now();
    let output = std::process::Command::new("clang-format")
        .arg("-i")
        .args(sources.iter().map(|(path, _)| path))
        .current_dir(cwd)
        .output()
        .map_err(|e| e.to_string())?;
    let elapsed = started.elapsed();
    if !output.status.success() {
        return Err(format!("clang-format -i failed: {}", String::from_utf8_lossy(&output.stderr)));
    }
    Ok(elapsed)
}
