//! Pure checks of what a debug call asks for: breakpoint specifications (`path:line` or a function
//! name), expressions (refused when they look like a debugger console command), and gdb's DAP support
//! by version.
//!
//! Architecture invariant: expressions only ever reach the adapter in `watch`/`hover` context; the
//! refusals here are a second wall in front of that, never the only one.

/// A breakpoint as the caller wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BreakpointSpec {
    /// `path:line`, the path still unparsed (the workspace checks it).
    Line {
        path: String,
        line: u32,
    },
    Function(String),
}

impl BreakpointSpec {
    pub fn parse(input: &str) -> Result<BreakpointSpec, String> {
        let input = input.trim();
        if input.is_empty() {
            return Err("a breakpoint is empty".to_owned());
        }
        if let Some((path, line)) = input.rsplit_once(':')
            && !line.is_empty()
            && line.bytes().all(|b| b.is_ascii_digit())
        {
            let line: u32 = line.parse().map_err(|_| format!("`{input}`: the line number is too large"))?;
            if line == 0 {
                return Err(format!("`{input}`: lines start at 1"));
            }
            if path.is_empty() {
                return Err(format!("`{input}` has no path before the line number"));
            }
            return Ok(BreakpointSpec::Line { path: path.to_owned(), line });
        }
        let allowed = |c: char| c.is_alphanumeric() || "_:~<>,*&() ".contains(c);
        if !input.chars().all(allowed) {
            return Err(format!(
                "`{input}` is neither `path:line` nor a function name (letters, digits, `_ : ~ < > , * & ( )`)"
            ));
        }
        Ok(BreakpointSpec::Function(input.to_owned()))
    }
}

/// Words that start a command of lldb's or gdb's console, never a C or C++ expression when a
/// blank and another word follow them.
const CONSOLE_COMMANDS: &[&str] = &[
    "apropos",
    "attach",
    "b",
    "br",
    "break",
    "breakpoint",
    "call",
    "command",
    "compile",
    "continue",
    "define",
    "detach",
    "disassemble",
    "display",
    "echo",
    "eval",
    "expr",
    "expression",
    "file",
    "frame",
    "gdb",
    "guile",
    "help",
    "info",
    "jump",
    "kill",
    "lldb",
    "log",
    "maint",
    "maintenance",
    "memory",
    "p",
    "pipe",
    "platform",
    "plugin",
    "po",
    "print",
    "process",
    "python",
    "q",
    "quit",
    "r",
    "register",
    "run",
    "script",
    "session",
    "set",
    "settings",
    "shell",
    "show",
    "source",
    "target",
    "thread",
    "type",
    "watch",
    "watchpoint",
];

/// Refuses an expression that could be read as a debugger console command: lldb's backtick
/// substitution, a leading `|` (a pipe), a line break (a second command), or a console
/// command word followed by an argument (`platform shell …`, `shell …`, `python …`).
pub fn check_expression(expression: &str) -> Result<(), String> {
    let trimmed = expression.trim();
    if trimmed.is_empty() {
        return Err("the expression is empty".to_owned());
    }
    if trimmed.contains(['\n', '\r', '\0']) {
        return Err("an expression is one line".to_owned());
    }
    if trimmed.contains('`') {
        return Err("backticks run debugger commands; they are refused".to_owned());
    }
    if trimmed.starts_with('|') {
        return Err(format!("`{trimmed}` looks like a debugger command; only expressions are evaluated"));
    }
    let word_end = trimmed.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-')).unwrap_or(trimmed.len());
    let (word, rest) = trimmed.split_at(word_end);
    let argument_follows = rest.starts_with(char::is_whitespace)
        && rest.trim_start().starts_with(|c: char| c.is_alphanumeric() || "_-/\"'$.".contains(c));
    if CONSOLE_COMMANDS.contains(&word) && (argument_follows || word.contains('-')) {
        return Err(format!("`{word} …` is a debugger console command; only expressions are evaluated"));
    }
    if word.contains('-') && argument_follows {
        return Err(format!("`{trimmed}` looks like a debugger command; only expressions are evaluated"));
    }
    Ok(())
}

/// Whether a gdb version banner's number has the DAP interpreter (`gdb -i dap`, gdb 14 and later).
pub fn gdb_has_dap(version: &str) -> bool {
    version.split('.').next().and_then(|major| major.trim().parse::<u32>().ok()).is_some_and(|major| major >= 14)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn breakpoints_are_lines_or_functions() {
        let line = |path: &str, line| BreakpointSpec::Line { path: path.to_owned(), line };
        assert_eq!(BreakpointSpec::parse("project/src/x.cpp:12"), Ok(line("project/src/x.cpp", 12)));
        assert_eq!(BreakpointSpec::parse(" src/x.cpp:3 "), Ok(line("src/x.cpp", 3)));
        assert_eq!(BreakpointSpec::parse("main"), Ok(BreakpointSpec::Function("main".into())));
        assert_eq!(
            BreakpointSpec::parse("fixture::Shape::area"),
            Ok(BreakpointSpec::Function("fixture::Shape::area".into()))
        );
        assert!(BreakpointSpec::parse("x.cpp:0").is_err());
        assert!(BreakpointSpec::parse(":4").is_err());
        assert!(BreakpointSpec::parse("").is_err());
        assert!(BreakpointSpec::parse("main; shell ls").is_err());
        assert!(BreakpointSpec::parse("`ls`").is_err());
    }

    #[test]
    fn console_commands_are_refused() {
        for refused in [
            "platform shell touch /tmp/x",
            "`platform shell id`",
            "shell id",
            "python import os",
            "script print(1)",
            "settings set target.x 1",
            "expr -- 1",
            "process launch",
            "|ls",
            "-exec shell id",
            "a\nshell id",
            "target-shell x",
            "",
        ] {
            assert!(check_expression(refused).is_err(), "{refused:?} was accepted");
        }
    }

    #[test]
    fn expressions_are_accepted() {
        for accepted in [
            "a * 10 + b",
            "origin.x",
            "p.x",
            "ptr->next",
            "set.size()",
            "sizeof(origin)",
            "(int)total",
            "print_count - 1",
            "values[2]",
            "!done",
            "-total",
            "thread == nullptr",
        ] {
            assert_eq!(check_expression(accepted), Ok(()), "{accepted:?}");
        }
    }

    #[test]
    fn gdb_versions() {
        assert!(!gdb_has_dap("13.1"));
        assert!(gdb_has_dap("14.2"));
        assert!(gdb_has_dap("15"));
        assert!(!gdb_has_dap("unknown"));
    }
}
