//! Transcript selection on a flooded journal: how long `process_get` takes for the true tail of 1 GiB
//! of output (goal: at most 10 ms), and how fast chunks are recorded while older ones spill to disk.
//!
//! Run with `cargo bench --bench process`. The journal is filled in process with 64 KiB chunks of
//! 64-byte numbered lines (what a flooding child delivers through a pipe), spilling to a temporary
//! directory. Each selection runs once to warm the cache, then the best and median of its runs are
//! reported. This prints figures and asserts nothing about speed; it fails only when the tail is wrong.
#![expect(clippy::print_stdout, reason = "a benchmark reports its figures on stdout")]

use std::process::ExitCode;
use std::time::{Duration, Instant};

use forgemcp::process::journal::{Journal, Stream};
use forgemcp::process::select::{LineSelector, Selection, TimeSelector, select};

const TOTAL_BYTES: u64 = 1 << 30;
const CHUNK_BYTES: usize = 64 * 1024;
const LINE_BYTES: usize = 64;
const RUNS: usize = 21;

fn main() -> ExitCode {
    let dir = match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(err) => {
            println!("cannot create a temporary directory: {err}");
            return ExitCode::FAILURE;
        }
    };
    let journal = Journal::new(Instant::now(), Some(dir.path().to_owned()));
    let lines_per_chunk = CHUNK_BYTES / LINE_BYTES;
    let n_chunks = TOTAL_BYTES / CHUNK_BYTES as u64;
    let mut chunk = Vec::with_capacity(CHUNK_BYTES);
    let started = Instant::now();
    for chunk_idx in 0..n_chunks {
        chunk.clear();
        for line_idx in 0..lines_per_chunk {
            let line = chunk_idx * lines_per_chunk as u64 + line_idx as u64 + 1;
            chunk.extend_from_slice(format!("line {line:010} {}\n", "x".repeat(LINE_BYTES - 17)).as_bytes());
        }
        // One chunk per simulated millisecond, so time selectors have something to cut.
        journal.record_at(Stream::Stdout, &chunk, Duration::from_millis(chunk_idx));
    }
    let recording = started.elapsed();
    let n_lines = TOTAL_BYTES / LINE_BYTES as u64;
    println!(
        "recorded {:.0} MiB in {} chunks: {:.2} s ({:.0} MiB/s); in memory: {:.1} MiB",
        TOTAL_BYTES as f64 / (1 << 20) as f64,
        n_chunks,
        recording.as_secs_f64(),
        TOTAL_BYTES as f64 / (1 << 20) as f64 / recording.as_secs_f64(),
        journal.memory_cost() as f64 / (1 << 20) as f64,
    );

    let reference = Duration::from_millis(n_chunks);
    let cases = [
        ("last 100 lines", Selection { lines: Some(LineSelector::Last(100)), ..Selection::default() }),
        ("first 100 lines", Selection { lines: Some(LineSelector::First(100)), ..Selection::default() }),
        (
            "middle range",
            Selection {
                lines: Some(LineSelector::Range { start: n_lines / 2, end: n_lines / 2 + 99 }),
                ..Selection::default()
            },
        ),
        ("last 1 s, 64 KiB", Selection { time: Some(TimeSelector::Last(1.0)), ..Selection::default() }),
    ];
    println!("{:<18} {:>10} {:>10}", "selection", "best", "median");
    for (label, selection) in cases {
        let mut times = Vec::with_capacity(RUNS);
        for run in 0..=RUNS {
            let started = Instant::now();
            let snapshot = journal.snapshot();
            let selected = match select(&snapshot, &selection, reference) {
                Ok(selected) => selected,
                Err(err) => {
                    println!("{label}: reading the journal failed: {err}");
                    return ExitCode::FAILURE;
                }
            };
            let elapsed = started.elapsed();
            if label == "last 100 lines" && selected.lines != Some((n_lines - 99, n_lines)) {
                println!("{label}: wrong tail {:?}", selected.lines);
                return ExitCode::FAILURE;
            }
            if run > 0 {
                times.push(elapsed);
            }
        }
        times.sort();
        println!("{label:<18} {:>8.3} ms {:>8.3} ms", ms(times[0]), ms(times[RUNS / 2]));
    }
    ExitCode::SUCCESS
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}
