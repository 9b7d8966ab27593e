//! The CMake language's command invocations, read from a file's text: names and arguments, with
//! quoted, bracket and unquoted arguments told apart, comments skipped. Nothing is evaluated here
//! (no variables, conditions or control flow); `globs.rs` reads what it needs from the commands.
//!
//! Architecture invariant: pure (text in, commands out); malformed text never fails: what cannot
//! be read as a command is skipped.

/// One argument of a command invocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arg {
    pub text: String,
    /// Quoted (`"…"`) or bracket (`[[…]]`) arguments are one value; unquoted ones are lists
    /// (split at `;` after variable references are expanded).
    pub quoted: bool,
}

/// One command invocation: its name in lower case and its arguments in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    pub name: String,
    pub args: Vec<Arg>,
}

/// The command invocations of a CMake file, in order.
pub fn commands(text: &str) -> Vec<Command> {
    let chars: Vec<char> = text.chars().collect();
    let mut res = Vec::new();
    let mut at = 0;
    while at < chars.len() {
        let c = chars[at];
        if c == '#' {
            at = skip_comment(&chars, at);
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = at;
            while at < chars.len() && (chars[at].is_ascii_alphanumeric() || chars[at] == '_') {
                at += 1;
            }
            let name: String = chars[start..at].iter().collect::<String>().to_ascii_lowercase();
            while at < chars.len() && (chars[at] == ' ' || chars[at] == '\t') {
                at += 1;
            }
            if chars.get(at) == Some(&'(') {
                let (args, end) = arguments(&chars, at + 1);
                res.push(Command { name, args });
                at = end;
            }
        } else {
            at += 1;
        }
    }
    res
}

/// The length of the bracket opening `[=*[` at `at` (with its `=` count), if one starts there.
fn bracket_open(chars: &[char], at: usize) -> Option<(usize, usize)> {
    if chars.get(at) != Some(&'[') {
        return None;
    }
    let mut idx = at + 1;
    while chars.get(idx) == Some(&'=') {
        idx += 1;
    }
    (chars.get(idx) == Some(&'[')).then_some((idx + 1 - at, idx - at - 1))
}

/// The bracket content from `at` (after the opening) and the index after the closing `]=*]`.
fn bracket_body(chars: &[char], at: usize, equals: usize) -> (String, usize) {
    let mut idx = at;
    while idx < chars.len() {
        if chars[idx] == ']' {
            let mut end = idx + 1;
            while end < chars.len() && chars[end] == '=' && end - idx - 1 < equals {
                end += 1;
            }
            if end - idx - 1 == equals && chars.get(end) == Some(&']') {
                return (chars[at..idx].iter().collect(), end + 1);
            }
        }
        idx += 1;
    }
    (chars[at..].iter().collect(), chars.len())
}

/// The index after a `#` comment (a bracket comment or the rest of the line).
fn skip_comment(chars: &[char], at: usize) -> usize {
    if let Some((len, equals)) = bracket_open(chars, at + 1) {
        return bracket_body(chars, at + 1 + len, equals).1;
    }
    chars[at..].iter().position(|&c| c == '\n').map_or(chars.len(), |len| at + len)
}

/// The arguments from `at` (after the opening parenthesis) and the index after the closing one.
/// Nested parentheses are kept as unquoted `(` and `)` arguments.
fn arguments(chars: &[char], mut at: usize) -> (Vec<Arg>, usize) {
    let mut args = Vec::new();
    let mut depth = 0usize;
    while at < chars.len() {
        let c = chars[at];
        match c {
            ')' if depth == 0 => return (args, at + 1),
            '(' | ')' => {
                depth = if c == '(' { depth + 1 } else { depth - 1 };
                args.push(Arg { text: c.to_string(), quoted: false });
                at += 1;
            }
            '#' => at = skip_comment(chars, at),
            '"' => {
                let (text, end) = quoted(chars, at + 1);
                args.push(Arg { text, quoted: true });
                at = end;
            }
            c if c.is_whitespace() => at += 1,
            _ => {
                if let Some((len, equals)) = bracket_open(chars, at) {
                    let (text, end) = bracket_body(chars, at + len, equals);
                    args.push(Arg { text, quoted: true });
                    at = end;
                    continue;
                }
                let (text, end) = unquoted(chars, at);
                args.push(Arg { text, quoted: false });
                at = end;
            }
        }
    }
    (args, at)
}

/// A quoted argument's value from `at` (after the quote) and the index after the closing quote;
/// an escaped character stands for itself and an escaped line end continues the line.
fn quoted(chars: &[char], mut at: usize) -> (String, usize) {
    let mut text = String::new();
    while at < chars.len() {
        match chars[at] {
            '"' => return (text, at + 1),
            '\\' if at + 1 < chars.len() => {
                match chars[at + 1] {
                    '\n' => {}
                    'n' => text.push('\n'),
                    't' => text.push('\t'),
                    other => text.push(other),
                }
                at += 2;
            }
            c => {
                text.push(c);
                at += 1;
            }
        }
    }
    (text, at)
}

/// An unquoted argument from `at` and the index after it (it ends at whitespace, a parenthesis,
/// a quote or a comment; `\x` escapes the character).
fn unquoted(chars: &[char], mut at: usize) -> (String, usize) {
    let mut text = String::new();
    while at < chars.len() {
        match chars[at] {
            c if c.is_whitespace() || c == '(' || c == ')' || c == '"' || c == '#' => break,
            '\\' if at + 1 < chars.len() => {
                text.push(chars[at + 1]);
                at += 2;
            }
            c => {
                text.push(c);
                at += 1;
            }
        }
    }
    (text, at)
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;

    fn show(text: &str) -> String {
        commands(text)
            .iter()
            .map(|command| {
                let args: Vec<String> = command
                    .args
                    .iter()
                    .map(|arg| if arg.quoted { format!("{:?}", arg.text) } else { arg.text.clone() })
                    .collect();
                format!("{}({})", command.name, args.join(" "))
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn commands_and_their_arguments() {
        let text = r#"
cmake_minimum_required(VERSION 3.10) # trailing comment with file(GLOB x *.cpp)
#[[ a bracket comment
file(GLOB hidden "*.c") ]]
set_property(GLOBAL PROPERTY USE_FOLDERS ON)
FILE (GLOB_RECURSE srcs CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/src/*.cpp"
      [=[lit]eral]=] un\ quoted)
if((A AND B) OR C)
message("quote \"inside\" and \\ done")
"#;
        expect![[r#"
            cmake_minimum_required(VERSION 3.10)
            set_property(GLOBAL PROPERTY USE_FOLDERS ON)
            file(GLOB_RECURSE srcs CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/src/*.cpp" "lit]eral" un quoted)
            if(( A AND B ) OR C)
            message("quote \"inside\" and \\ done")"#]]
        .assert_eq(&show(text));
    }

    #[test]
    fn malformed_text_is_skipped() {
        expect![[r#"file(GLOB x "unterminated")"#]].assert_eq(&show("file(GLOB x \"unterminated"));
        expect![[r#""#]].assert_eq(&show("]]) ( \" words without commands"));
    }
}
