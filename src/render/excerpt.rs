//! Source excerpts with right-aligned line numbers: `12 | int x = 1;`.

use std::fmt::Write as _;

/// Renders numbered lines; `empty` is returned when there are none.
pub fn numbered<'a>(lines: impl IntoIterator<Item = (u64, &'a str)>, empty: &str) -> String {
    let lines: Vec<(u64, &str)> = lines.into_iter().collect();
    let Some(last) = lines.iter().map(|(n, _)| *n).max() else { return empty.to_owned() };
    let width = last.to_string().len();
    let mut res = String::new();
    for (idx, (number, line)) in lines.iter().enumerate() {
        if idx > 0 {
            res.push('\n');
        }
        let _ = write!(res, "{number:>width$} | {line}");
    }
    res
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;

    #[test]
    fn numbers_are_right_aligned() {
        let lines = [(9, "int a;"), (10, "int b;"), (11, "")];
        expect![[r#"
             9 | int a;
            10 | int b;
            11 | "#]]
        .assert_eq(&numbered(lines, "none"));
    }

    #[test]
    fn empty_selection_uses_the_given_sentence() {
        assert_eq!(numbered([], "No lines in the selected range."), "No lines in the selected range.");
    }
}
