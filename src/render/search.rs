//! Text-search renderings: the plain-text tool content and the Markdown resource.

use std::fmt::Write as _;

use crate::render::markdown;
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

/// The tool's text content.
pub fn text(result: &TextSearch, options: &SearchOptions) -> String {
    let mode = if options.regex { "regular expression" } else { "literal text" };
    let case = if options.case_sensitive { "case-sensitive" } else { "case-insensitive" };
    let mut res = String::new();
    let _ = writeln!(res, "Search for \"{}\" ({mode}; {case})", options.query);
    let _ = writeln!(res, "Path: {}", result.path);
    let _ = writeln!(res, "Extensions: {}", extensions_label(options.extensions.as_deref()));
    res.push('\n');
    let _ = writeln!(
        res,
        "Returned {} of {} matching lines in {} displayed files.",
        result.matches.len(),
        result.matches_count,
        result.displayed_files()
    );
    let _ = writeln!(res, "Truncated: {}", if result.truncated() { "yes" } else { "no" });
    let _ = write!(res, "Skipped files: {}.", result.skipped_files.len());
    let width = result.matches.iter().map(|m| m.line).max().unwrap_or(0).to_string().len();
    let mut current = None;
    for m in &result.matches {
        if current != Some(&m.path) {
            let _ = write!(res, "\n\n{}", m.path);
            current = Some(&m.path);
        }
        let _ = write!(res, "\n  {:>width$} | {}", m.line, m.text);
    }
    res
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
        let m =
            |p: &str, line: u64, text: &str| TextMatch { path: q(p), line, text: text.into(), spans: vec![[4, 10]] };
        let result = TextSearch {
            path: q("project/"),
            matches: vec![
                m("project/a.cpp", 3, "int needle = 1;"),
                m("project/a.cpp", 12, "needle++;"),
                m("project/b/c.h", 7, "// needle"),
            ],
            matches_count: 5,
            skipped_files: vec![q("project/bin/app")],
        };
        let options = SearchOptions {
            query: "needle".into(),
            regex: false,
            case_sensitive: true,
            extensions: Some(vec!["cpp".into(), ".h".into()]),
            max_matches: 3,
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

            project/a.cpp
               3 | int needle = 1;
              12 | needle++;

            project/b/c.h
               7 | // needle"#]]
        .assert_eq(&text(&result, &options));
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
