//! Text and Markdown for file searches (`workspace_find_files`) and file metadata
//! (`workspace_file_info`).

use std::fmt::Write as _;

use chrono::{DateTime, SecondsFormat, Utc};

use crate::render::markdown;
use crate::workspace::find::FoundFiles;
use crate::workspace::info::FileInfo;
use crate::workspace::path::QualifiedPath;

/// What text and Markdown show for metadata the platform does not provide.
pub const UNAVAILABLE: &str = "Unavailable";

/// ISO 8601 / RFC 3339 UTC with a `Z`, keeping sub-second precision (as in JSON results).
pub fn iso_timestamp(at: &DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

/// `1 byte`, `12 bytes`.
pub fn byte_count(n: u64) -> String {
    if n == 1 { "1 byte".to_owned() } else { format!("{n} bytes") }
}

fn count(n: usize, one: &str, many: &str) -> String {
    if n == 1 { format!("1 {one}") } else { format!("{n} {many}") }
}

/// The plain-text result of a file search: one path a line (sizes and times are in the structured
/// result only).
pub fn found_files(found: &FoundFiles) -> String {
    let mut res = format!("Files matching \"{}\" in {}.\n", found.pattern, found.path);
    let _ = write!(res, "Found {}.", count(found.files.len(), "file", "files"));
    if !found.files.is_empty() {
        res.push('\n');
    }
    for file in &found.files {
        let _ = write!(res, "\n{}", file.path);
    }
    res
}

/// The Markdown resource of a file search: links to each file's text mirror.
pub fn found_files_markdown(found: &FoundFiles, mirror_uri: impl Fn(&QualifiedPath) -> String) -> String {
    let mut res = String::from("# Files\n\n");
    if found.files.is_empty() {
        res.push_str("No files found.\n");
    }
    for file in &found.files {
        let _ = writeln!(res, "- {}", markdown::link(&file.path.to_string(), &mirror_uri(&file.path)));
    }
    res
}

/// The plain-text metadata of one file.
pub fn file_info(info: &FileInfo) -> String {
    let created = info.created_at.as_ref().map_or_else(|| UNAVAILABLE.to_owned(), iso_timestamp);
    format!(
        "{}\n  Size: {}\n  Created: {created}\n  Modified: {}\n  Owner: {}",
        info.path,
        byte_count(info.size_bytes),
        iso_timestamp(&info.modified_at),
        info.owner.as_deref().unwrap_or(UNAVAILABLE),
    )
}

/// The Markdown resource of one file's metadata: a `Field | Value` table.
pub fn file_info_markdown(info: &FileInfo) -> String {
    let created = info.created_at.as_ref().map_or_else(|| UNAVAILABLE.to_owned(), markdown::timestamp);
    let rows = [
        ("Path", info.path.to_string()),
        ("Size", byte_count(info.size_bytes)),
        ("Created", created),
        ("Modified", markdown::timestamp(&info.modified_at)),
        ("Owner", info.owner.clone().unwrap_or_else(|| UNAVAILABLE.to_owned())),
    ];
    let mut res = String::from("# File information\n\n| Field | Value |\n| --- | --- |\n");
    for (field, value) in rows {
        let _ = writeln!(res, "| {field} | {} |", markdown::cell(&value));
    }
    res
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::workspace::find::FoundFile;

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    fn q(text: &str) -> QualifiedPath {
        QualifiedPath::parse(text).unwrap()
    }

    fn found(files: &[(&str, u64)]) -> FoundFiles {
        FoundFiles {
            pattern: "*.cpp".into(),
            path: q("project/"),
            files: files
                .iter()
                .map(|(path, size)| FoundFile {
                    path: q(path),
                    modified_at: at("2026-09-07T12:45:12.123456Z"),
                    size_bytes: *size,
                })
                .collect(),
        }
    }

    fn mirror(path: &QualifiedPath) -> String {
        format!("forgemcp://workspace/file/{path}")
    }

    fn info(created: Option<&str>, owner: Option<&str>) -> FileInfo {
        FileInfo {
            path: q("project/src/my_file.cpp"),
            created_at: created.map(at),
            modified_at: at("2026-09-07T12:45:12.5Z"),
            size_bytes: 1,
            owner: owner.map(str::to_owned),
        }
    }

    #[test]
    fn timestamps_keep_sub_second_precision() {
        assert_eq!(iso_timestamp(&at("2026-09-07T12:45:12.123456789Z")), "2026-09-07T12:45:12.123456789Z");
        assert_eq!(iso_timestamp(&at("2026-09-07T12:45:12Z")), "2026-09-07T12:45:12Z");
    }

    #[test]
    fn found_files_list_one_path_a_line() {
        expect![[r#"
            Files matching "*.cpp" in project/.
            Found 2 files.

            project/src/a.cpp
            project/src/b.cpp"#]]
        .assert_eq(&found_files(&found(&[("project/src/a.cpp", 1), ("project/src/b.cpp", 2048)])));
    }

    #[test]
    fn no_files_found() {
        expect![[r#"
            Files matching "*.cpp" in project/.
            Found 0 files."#]]
        .assert_eq(&found_files(&found(&[])));
        expect![[r#"
            # Files

            No files found.
        "#]]
        .assert_eq(&found_files_markdown(&found(&[]), mirror));
    }

    #[test]
    fn found_files_markdown_links_text_mirrors() {
        expect![[r#"
            # Files

            - [project/src/a_b.cpp](forgemcp://workspace/file/project/src/a_b.cpp)
            - [project/x.cpp](forgemcp://workspace/file/project/x.cpp)
        "#]]
        .assert_eq(&found_files_markdown(&found(&[("project/src/a_b.cpp", 1), ("project/x.cpp", 3)]), mirror));
    }

    #[test]
    fn file_info_text_shows_unavailable_metadata() {
        expect![[r#"
            project/src/my_file.cpp
              Size: 1 byte
              Created: 2026-09-06T08:00:00Z
              Modified: 2026-09-07T12:45:12.500Z
              Owner: alice"#]]
        .assert_eq(&file_info(&info(Some("2026-09-06T08:00:00Z"), Some("alice"))));
        expect![[r#"
            project/src/my_file.cpp
              Size: 1 byte
              Created: Unavailable
              Modified: 2026-09-07T12:45:12.500Z
              Owner: Unavailable"#]]
        .assert_eq(&file_info(&info(None, None)));
    }

    #[test]
    fn file_info_markdown_is_a_table() {
        expect![[r#"
            # File information

            | Field | Value |
            | --- | --- |
            | Path | project/src/my_file.cpp |
            | Size | 1 byte |
            | Created | Unavailable |
            | Modified | 07 Sep 2026, 12:45:12 UTC |
            | Owner | DOMAIN\alice |
        "#]]
        .assert_eq(&file_info_markdown(&info(None, Some("DOMAIN\\alice"))));
    }
}
