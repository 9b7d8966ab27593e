use super::*;
use std::sync::Mutex;
use std::sync::atomic::AtomicU64;

use std::fs;
use std::fs::File;

fn options(query: &str) -> SearchOptions {
    SearchOptions {
        query: query.to_owned(),
        regex: false,
        case_sensitive: true,
        extensions: None,
        max_matches: 100,
        offset: 0,
        exclude: Vec::new(),
        excluded_dirs: Vec::new(),
    }
}

fn write(root: &Path, rel_path: &str, contents: impl AsRef<[u8]>) {
    let path = root.join(rel_path);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, contents).unwrap();
}

/// Searches with whole files in memory, then again with every file streamed, and checks that
/// both ways agree.
fn run(start: &Path, options: &SearchOptions) -> SearchOutcome {
    let res = search(start, options, &|_, _| {}, &|| false).unwrap();
    let mut plan = Plan::new(options).unwrap();
    plan.whole_file_limit = 0;
    let streamed = search_with_plan(start, &plan, options.max_matches, &|_, _| {}, &|| false).unwrap();
    assert_eq!(res, streamed, "streamed files give the same outcome");
    res
}

/// `(rel_path, line)` of the returned matches.
fn located(outcome: &SearchOutcome) -> Vec<(String, u64)> {
    outcome.matches.iter().map(|m| (m.rel_path.clone(), m.line)).collect()
}

fn paths(outcome: &SearchOutcome) -> Vec<&str> {
    let mut res: Vec<&str> = outcome.matches.iter().map(|m| m.rel_path.as_str()).collect();
    res.dedup();
    res
}

#[test]
fn literal_query_escapes_regex_syntax() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.cpp", "x = a.b(1);\nx = aXb(1);\n");
    let outcome = run(dir.path(), &options("a.b(1)"));
    assert_eq!(located(&outcome), [("a.cpp".to_owned(), 1)]);
    assert_eq!(outcome.matches[0].spans, [[4, 10]]);
    assert_eq!(outcome.matches_count, 1);
}

#[test]
fn regex_query_uses_rust_regex_syntax() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.cpp", "x = a.b(1);\nx = aXb(1);\nnone\n");
    let outcome = run(dir.path(), &SearchOptions { regex: true, ..options(r"a.b\(\d\)") });
    assert_eq!(located(&outcome), [("a.cpp".to_owned(), 1), ("a.cpp".to_owned(), 2)]);
    assert_eq!(outcome.matches_count, 2);
}

#[test]
fn case_insensitive_query_folds_case() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "Hello\nHELLO\nhello\nhelo\n");
    let sensitive = run(dir.path(), &options("hello"));
    assert_eq!(sensitive.matches_count, 1);
    let insensitive = run(dir.path(), &SearchOptions { case_sensitive: false, ..options("hello") });
    assert_eq!(insensitive.matches_count, 3);
    assert_eq!(insensitive.matches[1].spans, [[0, 5]]);
}

#[test]
fn extension_filters_select_files() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a.cpp", "b.CPP", "c.h", "Makefile", ".bashrc", "d.", "e.tar.gz"] {
        write(dir.path(), name, "needle\n");
    }
    let with = |extensions: Option<&[&str]>| {
        let extensions = extensions.map(|exts| exts.iter().map(ToString::to_string).collect());
        let outcome = run(dir.path(), &SearchOptions { extensions, ..options("needle") });
        paths(&outcome).join(" ")
    };
    assert_eq!(with(None), ".bashrc Makefile a.cpp b.CPP c.h d. e.tar.gz");
    assert_eq!(with(Some(&[])), "");
    assert_eq!(with(Some(&[""])), ".bashrc Makefile d.");
    assert_eq!(with(Some(&[".cpp"])), "a.cpp b.CPP");
    assert_eq!(with(Some(&["CPP", "h"])), "a.cpp b.CPP c.h");
    assert_eq!(with(Some(&["gz"])), "e.tar.gz");
    assert_eq!(with(Some(&[".tar.gz"])), "e.tar.gz");
    assert_eq!(with(Some(&["bashrc"])), "");
}

#[test]
fn dot_directories_are_skipped_but_dot_files_are_searched() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), ".git/config", "needle\n");
    write(dir.path(), "src/.hidden/x.cpp", "needle\n");
    write(dir.path(), "src/.clang-format", "needle\n");
    write(dir.path(), "build/gen.cpp", "needle\n");
    let outcome = run(dir.path(), &options("needle"));
    assert_eq!(paths(&outcome), ["build/gen.cpp", "src/.clang-format"]);
    assert_eq!(outcome.files_visited, 2);
}

#[test]
fn start_directory_with_a_dot_name_is_searched() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), ".storage/build/log.txt", "needle\n");
    let outcome = run(&dir.path().join(".storage"), &options("needle"));
    assert_eq!(paths(&outcome), ["build/log.txt"]);
}

#[cfg(unix)]
#[test]
fn links_are_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "sub/x.cpp", "needle\n");
    write(dir.path(), "real.cpp", "needle\n");
    std::os::unix::fs::symlink(outside.path().join("sub"), dir.path().join("linked_dir")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("real.cpp"), dir.path().join("linked.cpp")).unwrap();
    let outcome = run(dir.path(), &options("needle"));
    assert_eq!(paths(&outcome), ["real.cpp"]);
    assert_eq!(outcome.files_visited, 1);
    let err = search(&dir.path().join("linked.cpp"), &options("needle"), &|_, _| {}, &|| false);
    assert!(matches!(err, Err(SearchError::StartIsLink)));
}

#[test]
fn binary_and_non_utf8_files_are_skipped_and_listed() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "text.cpp", "needle\n");
    write(dir.path(), "obj/main.o", b"needle\nneedle\n\0needle\n");
    write(dir.path(), "latin1.txt", b"needle\ncaf\xe9 needle\n");
    let outcome = run(dir.path(), &options("needle"));
    assert_eq!(paths(&outcome), ["text.cpp"]);
    assert_eq!(outcome.matches_count, 1);
    assert_eq!(outcome.skipped_files, ["latin1.txt", "obj/main.o"]);
    assert_eq!(outcome.files_visited, 3);
}

#[test]
fn max_matches_keeps_first_lines_and_counts_all() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["d/z.cpp", "a.cpp", "c.cpp", "b/x.cpp", "b.cpp"] {
        write(dir.path(), name, "needle\nother\nneedle\nneedle\n");
    }
    let outcome = run(dir.path(), &SearchOptions { max_matches: 5, ..options("needle") });
    let expected = [("a.cpp", 1), ("a.cpp", 3), ("a.cpp", 4), ("b.cpp", 1), ("b.cpp", 3)];
    let expected: Vec<_> = expected.iter().map(|&(p, l)| (p.to_owned(), l)).collect();
    assert_eq!(located(&outcome), expected);
    assert_eq!(outcome.matches_count, 15);
}

#[test]
fn max_matches_is_deterministic_across_many_files() {
    let dir = tempfile::tempdir().unwrap();
    for idx in 0..200 {
        write(dir.path(), &format!("d{}/f{idx:03}.cpp", idx % 7), "x needle\nneedle y\n");
    }
    let full = run(dir.path(), &SearchOptions { max_matches: 1000, ..options("needle") });
    assert_eq!(full.matches_count, 400);
    let mut sorted = located(&full);
    sorted.sort();
    assert_eq!(located(&full), sorted);
    for _ in 0..5 {
        let outcome = run(dir.path(), &SearchOptions { max_matches: 37, ..options("needle") });
        assert_eq!(outcome.matches, full.matches[..37]);
        assert_eq!(outcome.matches_count, 400);
    }
}

#[test]
fn spans_cover_every_match_including_zero_width() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "abab ab\nxyz\n");
    let outcome = run(dir.path(), &options("ab"));
    assert_eq!(outcome.matches[0].spans, [[0, 2], [2, 4], [5, 7]]);
    let regex = |query: &str| SearchOptions { regex: true, ..options(query) };
    let outcome = run(dir.path(), &regex(r"\b"));
    assert_eq!(outcome.matches[0].spans, [[0, 0], [4, 4], [5, 5], [7, 7]]);
    assert_eq!(outcome.matches[1].spans, [[0, 0], [3, 3]]);
    let outcome = run(dir.path(), &regex("b*"));
    assert_eq!(outcome.matches[0].spans, [[0, 0], [1, 2], [3, 4], [5, 5], [6, 7]]);
    assert_eq!(outcome.matches[1].spans, [[0, 0], [1, 1], [2, 2], [3, 3]]);
}

#[test]
fn zero_width_pattern_matches_every_line_but_not_past_the_end() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "one\n\nthree\n");
    write(dir.path(), "b.txt", "no final newline");
    write(dir.path(), "empty.txt", "");
    let outcome = run(dir.path(), &SearchOptions { regex: true, ..options("^") });
    assert_eq!(outcome.matches_count, 4);
    let outcome = run(dir.path(), &SearchOptions { regex: true, ..options("^$") });
    assert_eq!(located(&outcome), [("a.txt".to_owned(), 2)]);
}

#[test]
fn spans_are_unicode_code_points() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "// héllo wörld 😀 wörld\n");
    let outcome = run(dir.path(), &options("wörld"));
    assert_eq!(outcome.matches[0].spans, [[9, 14], [17, 22]]);
    let outcome = run(dir.path(), &SearchOptions { regex: true, ..options("q?") });
    assert_eq!(outcome.matches[0].spans.len(), "// héllo wörld 😀 wörld".chars().count() + 1);
    assert_eq!(outcome.matches[0].spans[22], [22, 22]);
    let outcome = run(dir.path(), &SearchOptions { case_sensitive: false, ..options("WÖRLD") });
    assert_eq!(outcome.matches[0].spans, [[9, 14], [17, 22]]);
}

#[test]
fn crlf_lines_exclude_their_terminator() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "first end\r\nsecond\r\nthird end\r\nlast end");
    let outcome = run(dir.path(), &SearchOptions { regex: true, ..options("end$") });
    assert_eq!(located(&outcome), [("a.txt".to_owned(), 1), ("a.txt".to_owned(), 3), ("a.txt".to_owned(), 4)]);
    assert_eq!(outcome.matches[0].text, "first end");
    assert_eq!(outcome.matches[0].spans, [[6, 9]]);
    assert_eq!(outcome.matches[2].text, "last end");
    write(dir.path(), "a.txt", "ab\r\nx\r\n");
    let outcome = run(dir.path(), &SearchOptions { regex: true, ..options(r"\B") });
    assert_eq!(located(&outcome), [("a.txt".to_owned(), 1)], "`x` has no match outside its CR LF");
    assert_eq!(outcome.matches_count, 1);
}

#[test]
fn line_numbers_count_lines_before_each_match() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (1..=500).map(|n| format!("line {n}\n")).collect();
    write(dir.path(), "a.txt", text);
    let outcome = run(dir.path(), &SearchOptions { regex: true, ..options(r"line \d*7$") });
    assert_eq!(outcome.matches_count, 50);
    assert_eq!(outcome.matches[0].line, 7);
    assert_eq!(outcome.matches[49].line, 497);
    assert_eq!(outcome.matches[49].text, "line 497");
}

#[test]
fn single_file_start_has_empty_rel_path() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "src/main.cpp", "int main() {}\n");
    write(dir.path(), "src/other.cpp", "int main() {}\n");
    let visited = Mutex::new(Vec::new());
    let on_file = |n: u64, rel: &str| lock(&visited).push((n, rel.to_owned()));
    let outcome = search(&dir.path().join("src/main.cpp"), &options("main"), &on_file, &|| false).unwrap();
    assert_eq!(located(&outcome), [(String::new(), 1)]);
    assert_eq!(lock(&visited).as_slice(), [(1, String::new())]);
}

#[test]
fn progress_reports_every_searched_file() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a.cpp", "b/c.cpp", "b/d.h"] {
        write(dir.path(), name, "x\n");
    }
    let visited = Mutex::new(Vec::new());
    let on_file = |n: u64, rel: &str| lock(&visited).push((n, rel.to_owned()));
    let extensions = Some(vec!["cpp".to_owned()]);
    search(dir.path(), &SearchOptions { extensions, ..options("x") }, &on_file, &|| false).unwrap();
    let mut visited = visited.into_inner().unwrap();
    visited.sort();
    let rel_paths: Vec<&str> = visited.iter().map(|(_, rel)| rel.as_str()).collect();
    let counts: Vec<u64> = visited.iter().map(|&(n, _)| n).collect();
    assert_eq!(counts, [1, 2]);
    let mut rel_paths = rel_paths;
    rel_paths.sort();
    assert_eq!(rel_paths, ["a.cpp", "b/c.cpp"]);
}

#[test]
fn cancellation_stops_the_search() {
    let dir = tempfile::tempdir().unwrap();
    for idx in 0..50 {
        write(dir.path(), &format!("f{idx}.cpp"), "needle\n");
    }
    let polls = AtomicU64::new(0);
    let cancel = || polls.fetch_add(1, Ordering::Relaxed) >= 3;
    let visited = AtomicU64::new(0);
    let on_file = |_: u64, _: &str| {
        visited.fetch_add(1, Ordering::Relaxed);
    };
    let res = search(dir.path(), &options("needle"), &on_file, &cancel);
    assert!(matches!(res, Err(SearchError::Cancelled)));
    assert!(visited.into_inner() < 50);
}

/// Checks `contents` as a whole file and as a streamed one; both must agree.
fn content_of(contents: &[u8]) -> &'static str {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "f", contents);
    let name = |content: Content| match content {
        Content::Text { .. } => "text",
        Content::Binary => "binary",
        Content::NotUtf8 => "not utf-8",
    };
    let mut buf = Vec::new();
    let mut file = File::open(dir.path().join("f")).unwrap();
    let whole = name(read_whole(&mut file, 0, &mut buf).unwrap());
    if whole == "text" {
        assert_eq!(buf, contents);
    }
    let mut file = File::open(dir.path().join("f")).unwrap();
    let streamed = name(check_streamed(&mut file, &mut buf).unwrap());
    assert_eq!(whole, streamed);
    whole
}

#[test]
fn contents_are_classified_across_chunk_boundaries() {
    let mut split_char = vec![b'a'; CHUNK_SIZE - 1];
    split_char.extend_from_slice("é\nneedle é\n".as_bytes());
    assert_eq!(content_of(&split_char), "text");
    let mut late_nul = vec![b'a'; CHUNK_SIZE + 10];
    late_nul.push(0);
    assert_eq!(content_of(&late_nul), "binary");
    let mut late_invalid = vec![b'a'; 2 * CHUNK_SIZE + 1];
    late_invalid.extend_from_slice(b"caf\xe9");
    assert_eq!(content_of(&late_invalid), "not utf-8");
    assert_eq!(content_of(b"cut short \xc3"), "not utf-8");
    assert_eq!(content_of(b""), "text");
}

#[test]
fn large_file_lines_are_numbered_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = "x\n".repeat(CHUNK_SIZE);
    text.push_str("needle é needle\r\n");
    text.push_str(&"y\n".repeat(CHUNK_SIZE));
    text.push_str("needle");
    write(dir.path(), "big.txt", &text);
    let outcome = run(dir.path(), &options("needle"));
    let line = CHUNK_SIZE as u64 + 1;
    assert_eq!(located(&outcome), [("big.txt".to_owned(), line), ("big.txt".to_owned(), 2 * line)]);
    assert_eq!(outcome.matches[0].text, "needle é needle");
    assert_eq!(outcome.matches[0].spans, [[0, 6], [9, 15]]);
}

#[test]
fn a_lone_cr_ends_a_line_in_whole_and_streamed_files() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "one\rneedle two\r\nthree\rneedle\r");
    for whole_file_limit in [WHOLE_FILE_LIMIT, 0] {
        let mut plan = Plan::new(&options("needle")).unwrap();
        plan.whole_file_limit = whole_file_limit;
        let outcome = search_with_plan(dir.path(), &plan, 10, &|_, _| {}, &|| false).unwrap();
        assert_eq!(located(&outcome), [("a.txt".to_owned(), 2), ("a.txt".to_owned(), 4)], "{whole_file_limit}");
        assert_eq!(outcome.matches[0].text, "needle two");
        assert_eq!(outcome.matches[1].text, "needle");
    }
}

#[test]
fn invalid_options_are_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let err = |options: SearchOptions| search(dir.path(), &options, &|_, _| {}, &|| false).unwrap_err();
    let invalid = err(SearchOptions { regex: true, ..options("(unclosed") });
    assert!(matches!(invalid, SearchError::InvalidRegex { .. }));
    assert!(invalid.to_string().starts_with("invalid regex: "), "{invalid}");
    assert!(invalid.to_string().contains("unclosed group"), "{invalid}");
    assert!(matches!(err(options("")), SearchError::EmptyQuery));
    assert!(matches!(err(SearchOptions { max_matches: 0, ..options("x") }), SearchError::ZeroMaxMatches));
    assert!(matches!(err(options("a\nb")), SearchError::LineBreakInQuery));
    let missing = search(&dir.path().join("missing"), &options("x"), &|_, _| {}, &|| false);
    assert!(matches!(missing, Err(SearchError::StartUnreadable { .. })));
}

#[test]
fn the_text_check_finds_a_cr_anywhere_and_a_nul_after_it() {
    let cases: [(Vec<u8>, Option<bool>); 5] = [
        (b"one\ntwo\n".to_vec(), Some(false)),
        (b"one\r\ntwo\r\n".to_vec(), Some(true)),
        ([vec![b'a'; CHUNK_SIZE + 10], b"\rb".to_vec()].concat(), Some(true)),
        (b"one\rtwo\0".to_vec(), None),
        ([vec![b'a'; CHUNK_SIZE + 10], b"\r\nb\0".to_vec()].concat(), None),
    ];
    for (contents, expected) in cases {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "f", &contents);
        let seen = |content: Content| match content {
            Content::Text { has_cr } => Some(has_cr),
            Content::Binary => None,
            Content::NotUtf8 => panic!("valid UTF-8"),
        };
        let mut buf = Vec::new();
        let whole = seen(read_whole(&mut File::open(dir.path().join("f")).unwrap(), 0, &mut buf).unwrap());
        let streamed = seen(check_streamed(&mut File::open(dir.path().join("f")).unwrap(), &mut buf).unwrap());
        assert_eq!((whole, streamed), (expected, expected), "{} bytes", contents.len());
    }
}
