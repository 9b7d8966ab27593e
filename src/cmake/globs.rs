//! The globs a configuration's CMake files run (`file(GLOB …)`, `file(GLOB_RECURSE …)`,
//! `aux_source_directory`), as patterns over workspace paths, so that a new or removed file
//! withdraws a context only when one of them can list it.
//!
//! Globs come from three places, used together: the `globsDependent` list of a `cmakeFiles` 1.1
//! reply (CMake 3.28+), CMake's own `CMakeFiles/VerifyGlobs.cmake` in the build tree (every
//! `CONFIGURE_DEPENDS` glob with its expression resolved), and the project's CMake files read as
//! text (every glob, `CONFIGURE_DEPENDS` or not: either way the new file reaches the compilation
//! database only through a configure). Reading a file evaluates only what a glob's expression
//! needs: `set` and `list(APPEND|INSERT|PREPEND …)` of the same file (every value a variable gets
//! anywhere in the file counts, so conditions only widen the result), and the directory variables.
//! A variable it cannot resolve matches any run of characters, `/` included, so an unknown part
//! never hides a file from a glob; a relative expression in a file other than a `CMakeLists.txt`
//! (whose current source directory is the includer's) may sit below any directory of the project.
//!
//! Architecture invariant: pure (texts and paths in, patterns out); `configure.rs` reads the files.

use std::collections::HashMap;
use std::path::Path;

use super::cmake_lang::{self, Command};
use crate::workspace::path::{Area, QualifiedPath, Roots};

/// Stands for an unresolved variable in an expression: any run of characters, `/` included.
const UNKNOWN: char = '\u{1}';

/// A glob as a pattern below a literal base directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob {
    /// The directory the expression's literal prefix names (the project root when it starts with
    /// an unresolved variable).
    pub base: QualifiedPath,
    /// The rest of the expression, `/`-separated (CMake wildcards `*`, `?`, `[…]`).
    rest: Vec<Token>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Char(char),
    /// `*`: any run of characters within one path component.
    Star,
    /// `?`: one character of a component.
    One,
    /// `[…]`: one character of the set (`!` or `^` first negates it).
    Class {
        chars: Vec<char>,
        negated: bool,
    },
    /// An unresolved variable: anything, `/` included.
    Any,
    /// The subdirectories `GLOB_RECURSE` descends into: nothing, or any path ending in `/`.
    Dirs,
}

/// A glob expression before it is placed in the workspace: an absolute host path pattern (with
/// `/` separators) that may contain unresolved parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expression {
    pub text: String,
    pub recurse: bool,
}

impl Glob {
    /// Places `expression` in the workspace; `None` when its literal prefix lies outside project/
    /// and storage/ (such a glob cannot see a workspace mutation).
    pub fn new(roots: &Roots, expression: &Expression) -> Option<Glob> {
        let text = &expression.text;
        let (base, rest) = if text.starts_with(UNKNOWN) {
            (QualifiedPath::area_root(Area::Project), text.as_str())
        } else {
            // The base ends at the last separator before the first wildcard (or before the last
            // component of a literal expression); the rest keeps that separator.
            let wild = text.find(['*', '?', '[', UNKNOWN]).unwrap_or(text.len());
            let cut = text[..wild].rfind('/').filter(|&cut| cut > 0)?;
            let normal: std::path::PathBuf = Path::new(&text[..cut]).components().collect();
            (roots.qualify(&normal).filter(QualifiedPath::is_managed)?, &text[cut..])
        };
        let mut rest = tokens(rest);
        if expression.recurse {
            // CMake matches the last component in every subdirectory of what the rest names.
            let last = rest.iter().rposition(|token| *token == Token::Char('/')).map_or(0, |at| at + 1);
            rest.insert(last, Token::Dirs);
        }
        Some(Glob { base, rest })
    }

    /// Whether an entry appearing or disappearing at `path` can change what the glob lists: the
    /// entry matches it, or it is the base directory or one of its ancestors.
    pub fn sees(&self, path: &QualifiedPath) -> bool {
        if self.base.starts_with(path) {
            return true;
        }
        if !path.starts_with(&self.base) {
            return false;
        }
        // Below the base, with the separator the pattern's rest starts with.
        let rel = &path.relative()[self.base.relative().len()..];
        let rel: Vec<char> = std::iter::once('/').chain(rel.trim_start_matches('/').chars()).collect();
        matches(&self.rest, &rel)
    }
}

fn tokens(text: &str) -> Vec<Token> {
    let chars: Vec<char> = text.chars().collect();
    let mut res = Vec::new();
    let mut at = 0;
    while at < chars.len() {
        let token = match chars[at] {
            '*' => Token::Star,
            '?' => Token::One,
            // `/${unknown}/`: the directories between, if any.
            UNKNOWN if at > 0 && chars[at - 1] == '/' && chars.get(at + 1) == Some(&'/') => {
                at += 1;
                Token::Dirs
            }
            UNKNOWN => Token::Any,
            '[' => match chars[at + 1..].iter().position(|&c| c == ']') {
                Some(len) if len > 0 => {
                    let mut set: Vec<char> = chars[at + 1..at + 1 + len].to_vec();
                    let negated = matches!(set.first(), Some('!' | '^')) && set.len() > 1;
                    if negated {
                        set.remove(0);
                    }
                    at += len + 1;
                    Token::Class { chars: set, negated }
                }
                _ => Token::Char('['),
            },
            c => Token::Char(c),
        };
        res.push(token);
        at += 1;
    }
    res
}

fn same(a: char, b: char) -> bool {
    if cfg!(windows) { a.eq_ignore_ascii_case(&b) } else { a == b }
}

/// Whether `pattern` matches all of `text` (backtracking; patterns and paths are short).
fn matches(pattern: &[Token], text: &[char]) -> bool {
    let Some((first, rest)) = pattern.split_first() else { return text.is_empty() };
    match first {
        Token::Char(c) => text.first().is_some_and(|t| same(*t, *c)) && matches(rest, &text[1..]),
        Token::One => text.first().is_some_and(|t| *t != '/') && matches(rest, &text[1..]),
        Token::Class { chars, negated } => {
            text.first().is_some_and(|t| *t != '/' && chars.iter().any(|c| same(*c, *t)) != *negated)
                && matches(rest, &text[1..])
        }
        Token::Star => {
            let limit = text.iter().position(|&c| c == '/').unwrap_or(text.len());
            (0..=limit).any(|skip| matches(rest, &text[skip..]))
        }
        Token::Any => (0..=text.len()).any(|skip| matches(rest, &text[skip..])),
        Token::Dirs => {
            matches(rest, text) || text.iter().enumerate().any(|(idx, &c)| c == '/' && matches(rest, &text[idx + 1..]))
        }
    }
}

/// The glob expressions a CMake file runs. `file` is the file's absolute path (`/` separators) and
/// `source` the top source directory.
pub fn scan(text: &str, file: &str, source: &str) -> Vec<Expression> {
    let list_dir = file.rsplit_once('/').map_or("", |(dir, _)| dir).to_owned();
    let lists_file = file.rsplit('/').next().is_some_and(|name| name == "CMakeLists.txt");
    // The current source directory of an included file is its includer's.
    let current = if lists_file { list_dir.clone() } else { format!("{source}/{UNKNOWN}") };
    let commands = cmake_lang::commands(text);
    let mut vars: HashMap<String, Vec<String>> = HashMap::new();
    vars.insert("CMAKE_CURRENT_LIST_DIR".to_owned(), vec![list_dir.clone()]);
    vars.insert("CMAKE_SOURCE_DIR".to_owned(), vec![source.to_owned()]);
    vars.insert("CMAKE_HOME_DIRECTORY".to_owned(), vec![source.to_owned()]);
    if lists_file {
        vars.insert("CMAKE_CURRENT_SOURCE_DIR".to_owned(), vec![list_dir.clone()]);
        if list_dir == source {
            vars.insert("PROJECT_SOURCE_DIR".to_owned(), vec![source.to_owned()]);
        }
    }
    collect_variables(&commands, &mut vars);
    let mut res = Vec::new();
    for command in &commands {
        let args = expand_all(command, &vars);
        let (recurse, mut exprs) = match (command.name.as_str(), args.first().map(String::as_str)) {
            ("file", Some("GLOB")) => (false, glob_expressions(&args[1..])),
            ("file", Some("GLOB_RECURSE")) => (true, glob_expressions(&args[1..])),
            ("aux_source_directory", Some(dir)) => (false, vec![format!("{}/*", dir.trim_end_matches('/'))]),
            _ => continue,
        };
        for expr in exprs.drain(..) {
            let absolute = expr.starts_with('/') || expr.starts_with(UNKNOWN) || is_drive_path(&expr);
            let text = if absolute { expr } else { format!("{current}/{expr}") };
            res.push(Expression { text, recurse });
        }
    }
    res
}

fn is_drive_path(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && b[2] == b'/'
}

/// The values `set` and `list(APPEND|INSERT|PREPEND …)` give variables anywhere in the file (in
/// order, each value once).
fn collect_variables(commands: &[Command], vars: &mut HashMap<String, Vec<String>>) {
    for command in commands {
        let args = expand_all(command, vars);
        let (name, values) = match (command.name.as_str(), args.first().map(String::as_str)) {
            ("set", Some(name)) => {
                let end = args.iter().position(|a| a == "CACHE" || a == "PARENT_SCOPE").unwrap_or(args.len());
                (name.to_owned(), args[1..end].to_vec())
            }
            ("list", Some("APPEND" | "PREPEND")) if args.len() > 1 => (args[1].clone(), args[2..].to_vec()),
            ("list", Some("INSERT")) if args.len() > 2 => (args[1].clone(), args[3..].to_vec()),
            _ => continue,
        };
        let entry = vars.entry(name).or_default();
        for value in values {
            if !entry.contains(&value) {
                entry.push(value);
            }
        }
    }
}

/// The expressions of `file(GLOB[_RECURSE] <variable> [options] <expressions>…)`, from the
/// variable on.
fn glob_expressions(args: &[String]) -> Vec<String> {
    let mut res = Vec::new();
    let mut idx = 1;
    while idx < args.len() {
        match args[idx].as_str() {
            "LIST_DIRECTORIES" | "RELATIVE" => idx += 1,
            "CONFIGURE_DEPENDS" | "FOLLOW_SYMLINKS" => {}
            expr => res.push(expr.to_owned()),
        }
        idx += 1;
    }
    res
}

/// A command's arguments with variable references expanded; unquoted arguments are split at `;`.
fn expand_all(command: &Command, vars: &HashMap<String, Vec<String>>) -> Vec<String> {
    let mut res = Vec::new();
    for arg in &command.args {
        let text = expand(&arg.text, vars);
        if arg.quoted {
            res.push(text);
        } else {
            res.extend(text.split(';').filter(|part| !part.is_empty()).map(str::to_owned));
        }
    }
    res
}

/// `text` with `${NAME}` replaced by the variable's values (joined with `;`, as CMake does) and
/// every other reference (`$ENV{…}`, nested or unknown names) by [`UNKNOWN`].
fn expand(text: &str, vars: &HashMap<String, Vec<String>>) -> String {
    let mut res = String::new();
    let mut rest = text;
    while let Some(start) = rest.find('$') {
        res.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        let Some(open) = after.find('{').filter(|&open| after[..open].chars().all(|c| c.is_ascii_uppercase())) else {
            res.push('$');
            rest = after;
            continue;
        };
        let Some(close) = after.find('}') else {
            res.push(UNKNOWN);
            return res;
        };
        let name = &after[open + 1..close];
        match vars.get(name) {
            Some(values) if open == 0 && !name.contains('$') => res.push_str(&values.join(";")),
            _ => res.push(UNKNOWN),
        }
        rest = &after[close + 1..];
    }
    res.push_str(rest);
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(text: &str) -> QualifiedPath {
        QualifiedPath::parse(text).unwrap()
    }

    fn roots() -> Roots {
        Roots::new("/w/proj".into(), "/w/storage".into())
    }

    fn globs(text: &str, file: &str) -> Vec<Glob> {
        scan(text, file, "/w/proj").iter().filter_map(|expr| Glob::new(&roots(), expr)).collect()
    }

    fn seen(globs: &[Glob], path: &str) -> bool {
        globs.iter().any(|glob| glob.sees(&q(path)))
    }

    #[test]
    fn pugixml_shape_a_glob_through_a_variable() {
        let text = r#"
if (PUGIXML_BUILD_TESTS)
  set(fuzz-pattern "tests/fuzz_*.cpp")
  set(test-pattern "tests/*.cpp")
  if (CMAKE_VERSION VERSION_GREATER 3.11)
    list(INSERT fuzz-pattern 0 CONFIGURE_DEPENDS)
    list(INSERT test-pattern 0 CONFIGURE_DEPENDS)
  endif()
  file(GLOB test-sources ${test-pattern})
  file(GLOB fuzz-sources ${fuzz-pattern})
endif()
"#;
        let found = globs(text, "/w/proj/CMakeLists.txt");
        assert_eq!(found.len(), 2);
        assert!(found.iter().all(|glob| glob.base == q("project/tests")));
        assert!(seen(&found, "project/tests/new_test.cpp"));
        assert!(!seen(&found, "project/tests/data/new.cpp"));
        assert!(!seen(&found, "project/tests/notes.md"));
        assert!(!seen(&found, "project/src/pugixml_extra.cpp"));
        assert!(!seen(&found, "project/docs/agent-notes.md"));
        // The base directory itself, or an ancestor, appearing or disappearing.
        assert!(seen(&found, "project/tests"));
        assert!(seen(&found, "project"));
    }

    #[test]
    fn gsl_shape_global_is_no_glob() {
        let text = r#"set_property(GLOBAL PROPERTY USE_FOLDERS ON)
# file(GLOB commented *.cpp)
message("file(GLOB in a string)")
file(GLOB GSL_TEST_SOURCES CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/*.cpp")
"#;
        let found = globs(text, "/w/proj/tests/CMakeLists.txt");
        assert_eq!(found.len(), 1);
        assert!(seen(&found, "project/tests/new_tests.cpp"));
        assert!(!seen(&found, "project/docs/agent-notes.md"));
        assert!(!seen(&found, "project/include/gsl/new"));
        assert!(globs("set_property(GLOBAL PROPERTY USE_FOLDERS ON)", "/w/proj/CMakeLists.txt").is_empty());
    }

    #[test]
    fn recursion_classes_and_unknown_parts() {
        let text = r#"
file(GLOB_RECURSE srcs RELATIVE ${CMAKE_SOURCE_DIR} LIST_DIRECTORIES false src/*.c[px]p)
file(GLOB hdrs ${SOMEWHERE}/*.h)
aux_source_directory(lib LIB_SOURCES)
file(GLOB outside /usr/include/*.h)
"#;
        let found = globs(text, "/w/proj/CMakeLists.txt");
        assert_eq!(found.len(), 3, "the glob outside the roots is left out");
        assert!(seen(&found, "project/src/a.cpp"));
        assert!(seen(&found, "project/src/deep/er/a.cxp"));
        assert!(!seen(&found, "project/src/a.c"));
        assert!(seen(&found, "project/include/x/y.h"));
        assert!(seen(&found, "project/lib/anything.txt"));
        assert!(!seen(&found, "project/lib/sub/x.c"));
        assert!(!seen(&found, "project/README.md"));
    }

    #[test]
    fn included_files_glob_below_an_unknown_directory() {
        let found =
            globs("file(GLOB s src/*.cpp)\nfile(GLOB t ${CMAKE_CURRENT_LIST_DIR}/t/*.cpp)", "/w/proj/cmake/S.cmake");
        assert!(seen(&found, "project/src/a.cpp"));
        assert!(seen(&found, "project/lib/src/a.cpp"));
        assert!(seen(&found, "project/cmake/t/a.cpp"));
        assert!(!seen(&found, "project/t/a.cpp"));
        assert!(!seen(&found, "project/docs/a.md"));
    }

    #[test]
    fn verify_globs_of_the_build_tree() {
        let text = r#"# CMAKE generated file: DO NOT EDIT!
# Generated by CMake Version 3.25
cmake_policy(SET CMP0009 NEW)

# test-sources at CMakeLists.txt:315 (file)
file(GLOB NEW_GLOB LIST_DIRECTORIES true "/w/proj/tests/*.cpp")
set(OLD_GLOB
  "/w/proj/tests/a.cpp"
  )
if(NOT "${NEW_GLOB}" STREQUAL "${OLD_GLOB}")
  message("-- GLOB mismatch!")
  file(TOUCH_NOCREATE "/w/storage/build/cmake-Debug/CMakeFiles/cmake.verify_globs")
endif()
"#;
        let found = globs(text, "/w/storage/build/cmake-Debug/CMakeFiles/VerifyGlobs.cmake");
        assert_eq!(found.len(), 1);
        assert!(seen(&found, "project/tests/b.cpp"));
        assert!(!seen(&found, "project/src/b.cpp"));
    }
}
