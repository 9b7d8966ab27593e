//! Text-search renderings: the plain-text tool content and the Markdown resource.

use std::fmt::Write as _;

use crate::render::{markdown, thousands};
use crate::workspace::path::QualifiedPath;
use crate::workspace::search::SearchOptions;
use crate::workspace::text_search::TextSearch;

/// `All`, `cpp, hpp`, `No extensions` or `None`.
fn extensions_label(extensions: Option<&[String]>) -> String {
    match extensions {
        None => "All".to_owned(),
        Some([]) => "None (no file can match)".to_owned(),
        Some(list) if list.iter().all(|e| e.trim_start_matches('.').is_empty()) => "No extensions".to_owned(),
        Some(list) => list
            .iter()
            .map(|e| match e.trim_start_matches('.') {
                "" => "no extension".to_owned(),
                ext => ext.to_owned(),
            })
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// Directories listed in the per-directory counts at most.
const MAX_DIRECTORIES: usize = 8;

/// Matching lines per directory below the search path, most first: the shallowest level (down to
/// three) at which the files with matches fall into more than one directory; files directly in a
/// listed level count under the search path itself.
pub fn by_directory(result: &TextSearch) -> Vec<(String, u64)> {
    let base = result.path.to_string();
    let base = base.trim_end_matches('/');
    let mut groups: Vec<(&str, u64)> = Vec::new();
    for depth in 1..=3 {
        let mut counts: std::collections::BTreeMap<&str, u64> = std::collections::BTreeMap::new();
        // Files come sorted by path, so neighbours mostly share a directory: sum runs first.
        let mut run: Option<(&str, u64)> = None;
        for (path, n) in &result.file_counts {
            let dir = directory_at(below(path, &result.path), depth);
            match &mut run {
                Some((current, sum)) if *current == dir => *sum += n,
                _ => {
                    if let Some((done, sum)) = run.replace((dir, *n)) {
                        *counts.entry(done).or_default() += sum;
                    }
                }
            }
        }
        if let Some((done, sum)) = run {
            *counts.entry(done).or_default() += sum;
        }
        groups = counts.into_iter().collect();
        if groups.len() > 1 {
            break;
        }
    }
    let mut groups: Vec<(String, u64)> = groups
        .into_iter()
        .map(|(dir, n)| (if dir.is_empty() { format!("{base}/") } else { format!("{base}/{dir}/") }, n))
        .collect();
    groups.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    groups
}

/// A file's path below the search path (files lie below it, in its area).
fn below<'a>(path: &'a QualifiedPath, start: &QualifiedPath) -> &'a str {
    let rel = path.relative();
    rel.strip_prefix(start.relative()).unwrap_or(rel).trim_start_matches('/')
}

/// The first `depth` directories of a file's relative path (fewer when it has fewer; `""` for a
/// file directly at the top).
fn directory_at(rel: &str, depth: usize) -> &str {
    let Some(parent_end) = rel.rfind('/') else { return "" };
    let parent = &rel[..parent_end];
    match parent.match_indices('/').nth(depth - 1) {
        Some((at, _)) => &parent[..at],
        None => parent,
    }
}

/// The tool's text content; `groups` is [`by_directory`] of `result`.
pub fn text(result: &TextSearch, options: &SearchOptions, groups: &[(String, u64)]) -> String {
    let mode = if options.regex { "regular expression" } else { "literal text" };
    let case = if options.case_sensitive { "case-sensitive" } else { "case-insensitive" };
    let mut res = String::new();
    let _ = writeln!(res, "Search for \"{}\" ({mode}; {case})", options.query);
    let _ = writeln!(res, "Path: {}", result.path);
    let _ = writeln!(res, "Extensions: {}", extensions_label(options.extensions.as_deref()));
    if !options.exclude.is_empty() {
        let _ = writeln!(res, "Excluded: {}", options.exclude.join(", "));
    }
    if !result.excluded_dirs.is_empty() {
        let dirs: Vec<String> = result.excluded_dirs.iter().map(|d| format!("{d}/")).collect();
        let _ = writeln!(res, "Excluded by the server (--exclude-dir): {}", dirs.join(", "));
    }
    res.push('\n');
    let n_files = result.file_counts.len() as u64;
    if result.files_page.is_some() {
        let listed: Vec<_> = result.listed_files().collect();
        let _ = write!(
            res,
            "{} matching lines in {} files; returned {}.",
            thousands(result.matches_count),
            thousands(n_files),
            span("file", result.offset, listed.len() as u64, n_files)
        );
    } else {
        let _ = writeln!(
            res,
            "Returned {} of {} matching lines in {} displayed files{}.",
            result.matches.len(),
            result.matches_count,
            result.displayed_files(),
            if result.offset > 0 { format!(" (after the first {})", result.offset) } else { String::new() }
        );
        let _ = writeln!(res, "Truncated: {}", if result.truncated() { "yes" } else { "no" });
        if result.over_budget > 0 {
            let _ =
                writeln!(res, "The result's byte budget left out {} more of the requested lines.", result.over_budget);
        }
        let _ = write!(res, "Skipped files: {}.", result.skipped_files.len());
    }
    if groups.len() > 1 {
        let shown: Vec<String> =
            groups.iter().take(MAX_DIRECTORIES).map(|(dir, n)| format!("{} in {dir}", thousands(*n))).collect();
        let more = groups.len().saturating_sub(MAX_DIRECTORIES);
        let more = if more > 0 { format!(" and {more} more directories") } else { String::new() };
        let _ = write!(res, "\nBy directory: {}{more}.", shown.join(", "));
    }
    let next = result.offset + result.matches.len() as u64;
    if result.files_page.is_none() && next < result.matches_count && !result.matches.is_empty() {
        let _ = write!(res, "\nMore: offset={next} (or narrow with path, extensions or exclude).");
    }
    if result.files_page.is_some() {
        for (path, n) in result.listed_files() {
            let _ = write!(res, "\n{path} ({})", lines(n));
        }
        return res;
    }
    let width = result.matches.iter().map(|m| m.line).max().unwrap_or(0).to_string().len();
    let mut current = None;
    for m in &result.matches {
        if current != Some(&m.path) {
            let _ = write!(res, "\n\n{}", m.path);
            current = Some(&m.path);
        }
        match m.clip {
            Some(clip) => {
                let column = m.spans.first().map_or(clip.from, |span| clip.from + span[0]) + 1;
                let _ = write!(
                    res,
                    "\n  {:>width$} | (line {} is {} characters; showing {} around column {column}) {}",
                    m.line,
                    m.line,
                    thousands(clip.line_chars as u64),
                    m.text.chars().count(),
                    m.text
                );
            }
            None => {
                let _ = write!(res, "\n  {:>width$} | {}", m.line, m.text);
            }
        }
    }
    res
}

/// `1 line`, `1,336 lines`.
fn lines(n: u64) -> String {
    if n == 1 { "1 line".to_owned() } else { format!("{} lines", thousands(n)) }
}

/// `files 21–40 of 57`, `none of 57 files`.
fn span(what: &str, offset: u64, n: u64, total: u64) -> String {
    if n == 0 {
        return format!("none of {} {what}s (offset {offset})", thousands(total));
    }
    format!("{what}s {}–{} of {}", offset + 1, offset + n, thousands(total))
}

/// The `forgemcp://workspace/search…` Markdown resource.
pub fn markdown(result: &TextSearch, skipped_files_uri: Option<&str>) -> String {
    let mut res = String::from("# Search results\n\n");
    if result.matches.is_empty() {
        res.push_str("No matches.\n");
    }
    for m in &result.matches {
        let mirror = format!("forgemcp://workspace/file/{}", m.path);
        let _ = writeln!(res, "{}, line {}\n", markdown::link(&m.path.to_string(), &mirror), m.line);
        let _ = writeln!(res, "{}\n", markdown::fence(&m.text, ""));
    }
    let _ = writeln!(
        res,
        "\nReturned {} of {} matching lines.\n\n## Skipped files\n\n{} files were skipped as binary or not UTF-8.",
        result.matches.len(),
        result.matches_count,
        result.skipped_files.len()
    );
    if let Some(uri) = skipped_files_uri {
        let _ = writeln!(res, "\nThe complete list: {}", markdown::link("skipped files", uri));
    }
    res
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::workspace::path::QualifiedPath;
    use crate::workspace::text_search::TextMatch;

    fn sample() -> (TextSearch, SearchOptions) {
        let q = |s: &str| QualifiedPath::parse(s).unwrap();
        let m = |p: &str, line: u64, text: &str| TextMatch {
            path: q(p),
            line,
            text: text.into(),
            spans: vec![[4, 10]],
            clip: None,
        };
        let result = TextSearch {
            path: q("project/"),
            matches: vec![
                m("project/a.cpp", 3, "int needle = 1;"),
                m("project/a.cpp", 12, "needle++;"),
                m("project/b/c.h", 7, "// needle"),
            ],
            matches_count: 5,
            skipped_files: vec![q("project/bin/app")],
            file_counts: vec![(q("project/a.cpp"), 4), (q("project/b/c.h"), 1)],
            offset: 0,
            files_page: None,
            excluded_dirs: Vec::new(),
            over_budget: 0,
            index: crate::workspace::search::index::IndexStatus::Ready,
        };
        let options = SearchOptions {
            query: "needle".into(),
            regex: false,
            case_sensitive: true,
            extensions: Some(vec!["cpp".into(), ".h".into()]),
            max_matches: 3,
            offset: 0,
            exclude: Vec::new(),
            excluded_dirs: Vec::new(),
        };
        (result, options)
    }

    #[test]
    fn text_groups_lines_by_file() {
        let (result, options) = sample();
        expect![[r#"
            Search for "needle" (literal text; case-sensitive)
            Path: project/
            Extensions: cpp, h

            Returned 3 of 5 matching lines in 2 displayed files.
            Truncated: yes
            Skipped files: 1.
            By directory: 4 in project/, 1 in project/b/.
            More: offset=3 (or narrow with path, extensions or exclude).

            project/a.cpp
               3 | int needle = 1;
              12 | needle++;

            project/b/c.h
               7 | // needle"#]]
        .assert_eq(&text(&result, &options, &by_directory(&result)));
    }

    #[test]
    fn directories_split_at_the_shallowest_level_that_splits_them() {
        assert_eq!(directory_at("a.cpp", 1), "");
        assert_eq!(directory_at("a/b/c/d/e.cpp", 1), "a");
        assert_eq!(directory_at("a/b/c/d/e.cpp", 3), "a/b/c");
        assert_eq!(directory_at("a/b/e.cpp", 3), "a/b");
        let (mut result, _) = sample();
        result.path = QualifiedPath::parse("project/src").unwrap();
        result.file_counts =
            [("src/x/one/a.cpp", 2), ("src/x/one/b.cpp", 1), ("src/x/two/c.cpp", 4), ("src/x/d.cpp", 1)]
                .into_iter()
                .map(|(rel, n)| (QualifiedPath::parse(&format!("project/{rel}")).unwrap(), n))
                .collect();
        let expected = [("project/src/x/two/", 4), ("project/src/x/one/", 3), ("project/src/x/", 1)];
        assert_eq!(by_directory(&result), expected.map(|(dir, n)| (dir.to_owned(), n)));
    }

    #[test]
    fn extension_labels() {
        assert_eq!(extensions_label(None), "All");
        assert_eq!(extensions_label(Some(&[String::new()])), "No extensions");
        assert_eq!(extensions_label(Some(&[])), "None (no file can match)");
    }

    #[test]
    fn markdown_links_matches_to_mirrors() {
        let (result, _) = sample();
        expect![[r#"
            # Search results

            [project/a.cpp](forgemcp://workspace/file/project/a.cpp), line 3

            ```
            int needle = 1;
            ```

            [project/a.cpp](forgemcp://workspace/file/project/a.cpp), line 12

            ```
            needle++;
            ```

            [project/b/c.h](forgemcp://workspace/file/project/b/c.h), line 7

            ```
            // needle
            ```


            Returned 3 of 5 matching lines.

            ## Skipped files

            1 files were skipped as binary or not UTF-8.

            The complete list: [skipped files](forgemcp://workspace/results/x/skipped_files.json)
        "#]]
        .assert_eq(&markdown(&result, Some("forgemcp://workspace/results/x/skipped_files.json")));
    }
}
