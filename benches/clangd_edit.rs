//! Annotated edits and `clangd.json` size on a generated 3,000-line C file in a configured copy of
//! `examples/cpp-acceptance-project` (Debug only):
//! - the cost of `workspace_edit_file` with its `resources.clangd` and edit-delta diagnostics, against
//!   a plain `clangd_diagnostics` of the same file, alternated in one run; once with the before-state
//!   remembered (the previous edit analysed it) and once with the file changed outside the server
//!   first, so the old content is analysed again (goal for both: ≤ 2.2×); each as the ratio of the
//!   medians and as the median of the per-round ratios (each round's plain call is its reference);
//! - the size of the `clangd.json` of a whole-file read, as written (compact tokens) and as §8.3's
//!   span objects would have been (goal: ≤ 15%).
//!
//! Run with `cargo bench --bench clangd_edit`. It needs cmake, ninja, a C++ compiler and clangd on
//! `PATH` (it says so and exits when one is missing). Prints figures; asserts nothing about speed.
#![expect(clippy::print_stdout, reason = "a benchmark reports its figures on stdout")]

mod common;

use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use rmcp::model::{ReadResourceRequestParams, ResourceContents};
use serde_json::{Value, json};

const RUNS: usize = 30;
const FILE: &str = "analysis/generated.c";
const LINES: usize = 3000;

fn main() -> ExitCode {
    common::run("clangd_edit", &["cmake", "ninja", "c++", "clangd"], run())
}

/// About 3,000 lines of plain C: structs, functions, loops and a toggled constant at the end.
fn generated() -> String {
    let mut text = String::from("#include <stddef.h>\n\n");
    let mut n = 0;
    while text.lines().count() < LINES - 3 {
        let _ = write!(
            text,
            "struct item_{n} {{\n    int id;\n    const char *name;\n    double weight;\n}};\n\n\
             static int sum_{n}(const struct item_{n} *items, size_t count)\n{{\n    int total = 0;\n    \
             for (size_t i = 0; i < count; ++i) {{\n        total += items[i].id * (int)items[i].weight;\n    }}\n    \
             return total;\n}}\n\n"
        );
        n += 1;
    }
    text.push_str("int bench_toggle = 0;\n");
    text
}

fn is_error(res: &rmcp::model::CallToolResult) -> bool {
    res.is_error == Some(true)
}

async fn run() -> Result<(), String> {
    let served = common::serve_acceptance_copy().await?;
    let configured = served.call("cmake_configure", json!({ "profiles": ["Debug"] })).await?;
    if !common::succeeded(&configured) {
        return Err(format!("cmake_configure failed: {configured:?}"));
    }
    let text = generated();
    let written = served.call("workspace_write_file", json!({ "path": FILE, "text": text })).await?;
    if is_error(&written) {
        return Err(format!("workspace_write_file failed: {written:?}"));
    }
    let warm = served.call("clangd_workspace_symbols", json!({ "query": "sum_", "timeout": 120 })).await?;
    if is_error(&warm) {
        return Err(format!("clangd_workspace_symbols failed: {warm:?}"));
    }

    // clangd.json of a whole-file read (an explicit end_line: the default read stops at 2,000 lines).
    let read = served.call("workspace_read_file", json!({ "path": FILE, "end_line": LINES })).await?;
    let uri =
        read.structured_content.as_ref().and_then(|v| v["resources"]["clangd"]["uri"].as_str().map(str::to_owned));
    let uri = uri.ok_or_else(|| format!("the read has no clangd link: {read:?}"))?;
    let contents =
        served.client.read_resource(ReadResourceRequestParams::new(uri)).await.map_err(|e| e.to_string())?.contents;
    let Some(ResourceContents::TextResourceContents { text: document, .. }) = contents.into_iter().next() else {
        return Err("clangd.json is not text".into());
    };
    let parsed: Value = serde_json::from_str(&document).map_err(|e| e.to_string())?;
    let old = serde_json::to_string(&as_span_objects(&parsed)).map_err(|e| e.to_string())?;
    let tokens: usize = parsed["files"][0]["highlighting"]
        .as_array()
        .map_or(0, |groups| groups.iter().map(|g| g["tokens"].as_array().map_or(0, Vec::len) / 5).sum());
    println!("clangd.json of a whole read of project/{FILE} ({LINES} lines, {tokens} semantic tokens):");
    println!("  span objects (§8.3, before): {} bytes", old.len());
    println!("  compact tokens (now):        {} bytes", document.len());
    println!("  ratio: {:.1}% (goal ≤ 15%)", document.len() as f64 * 100.0 / old.len() as f64);

    // Annotated edits against plain diagnostics, alternated.
    let diagnostics = json!({ "path": FILE, "configurations": ["Debug"] });
    let toggle = |run: usize| {
        let (old, new) = if run.is_multiple_of(2) { ("= 0;", "= 1;") } else { ("= 1;", "= 0;") };
        json!({ "path": FILE, "old_text": format!("bench_toggle {old}"), "new_text": format!("bench_toggle {new}") })
    };
    let abs = served.project.join(FILE);
    let mut plain = Vec::new();
    let mut remembered = Vec::new();
    let mut analysed = Vec::new();
    for run in 0..=RUNS {
        let started = Instant::now();
        let res = served.call("clangd_diagnostics", diagnostics.clone()).await?;
        let plain_time = started.elapsed();
        if is_error(&res) {
            return Err(format!("clangd_diagnostics failed: {res:?}"));
        }
        // The previous edit (or the diagnostics just above) analysed exactly this content.
        let started = Instant::now();
        let res = served.call("workspace_edit_file", toggle(2 * run)).await?;
        let remembered_time = started.elapsed();
        check_annotated(&res)?;
        // Changed outside the server: the old content must be analysed again.
        let current = std::fs::read_to_string(&abs).map_err(|e| e.to_string())?;
        std::fs::write(&abs, format!("{current}/* outside {run} */\n")).map_err(|e| e.to_string())?;
        let started = Instant::now();
        let res = served.call("workspace_edit_file", toggle(2 * run + 1)).await?;
        let analysed_time = started.elapsed();
        check_annotated(&res)?;
        if run > 0 {
            plain.push(plain_time);
            remembered.push(remembered_time);
            analysed.push(analysed_time);
        }
    }
    // Per round, against the plain call of the same round (robust when the machine's load drifts).
    let per_round = |times: &[Duration]| -> Vec<f64> {
        times.iter().zip(&plain).map(|(t, p)| t.as_secs_f64() / p.as_secs_f64()).collect()
    };
    let (remembered_rounds, analysed_rounds) = (per_round(&remembered), per_round(&analysed));
    let median = |times: &mut Vec<Duration>| {
        times.sort();
        times[times.len() / 2]
    };
    let median_ratio = |mut ratios: Vec<f64>| {
        ratios.sort_by(f64::total_cmp);
        ratios[ratios.len() / 2]
    };
    let (plain, remembered, analysed) = (median(&mut plain), median(&mut remembered), median(&mut analysed));
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let ratio = |d: Duration| d.as_secs_f64() / plain.as_secs_f64();
    println!("project/{FILE} on a warm session, medians of {RUNS} alternated runs:");
    println!("  clangd_diagnostics:                                {:.1} ms", ms(plain));
    println!(
        "  annotated edit, before-state remembered:           {:.1} ms, ratio {:.2}, per round {:.2} (goal ≤ 2.2)",
        ms(remembered),
        ratio(remembered),
        median_ratio(remembered_rounds)
    );
    println!(
        "  annotated edit, old content analysed again:        {:.1} ms, ratio {:.2}, per round {:.2} (goal ≤ 2.2)",
        ms(analysed),
        ratio(analysed),
        median_ratio(analysed_rounds)
    );
    served.services.clangd.shutdown().await;
    served.processes.shutdown().await;
    Ok(())
}

fn check_annotated(res: &rmcp::model::CallToolResult) -> Result<(), String> {
    let has_link = res.structured_content.as_ref().is_some_and(|v| v["resources"]["clangd"].is_object());
    if is_error(res) || !has_link {
        return Err(format!("the edit has no clangd annotations: {res:?}"));
    }
    Ok(())
}

/// The document as INTERFACE.md §8.3's span objects would have written it.
fn as_span_objects(document: &Value) -> Value {
    let mut document = document.clone();
    for file in document["files"].as_array_mut().into_iter().flatten() {
        for group in file["highlighting"].as_array_mut().into_iter().flatten() {
            let (mut line, mut start) = (1u64, 0u64);
            let legend = group["legend"].clone();
            let tokens: Vec<u64> = group["tokens"].as_array().into_iter().flatten().filter_map(Value::as_u64).collect();
            let mut spans = Vec::new();
            for token in tokens.chunks(5) {
                (line, start) = if token[0] > 0 { (line + token[0], token[1]) } else { (line, start + token[1]) };
                let modifiers: Vec<Value> = (0..32)
                    .filter(|bit| token[4] & (1 << bit) != 0)
                    .filter_map(|bit| legend["modifiers"].get(bit as usize).cloned())
                    .collect();
                spans.push(json!({
                    "range": { "start": { "line": line, "character": start },
                               "end": { "line": line, "character": start + token[2] } },
                    "kind": legend["types"][token[3] as usize],
                    "modifiers": modifiers,
                }));
            }
            let object = group.as_object_mut().expect("an entry");
            object.remove("legend");
            object.remove("tokens");
            object.insert("spans".into(), Value::Array(spans));
        }
    }
    document
}
