//! The subset of RFC 6570 URI templates ForgeMCP serves: literals, `{name}`, `{/name*}` and
//! `{?a,b,c}`, with strict percent-decoding (`%20` is a space, `+` stays a plus).
//!
//! Architecture invariant: a decoded path segment never contains a separator; `%2F` inside a
//! segment is rejected rather than turned into a path separator.

use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Simple(String),
    PathExplode(String),
    Query(Vec<String>),
}

/// A parsed template.
#[derive(Debug, Clone)]
pub struct UriTemplate {
    source: &'static str,
    parts: Vec<Part>,
}

/// Why a URI that has the template's shape still cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    #[error("invalid percent-encoding in `{0}`")]
    BadEncoding(String),
    #[error("the decoded path segment `{0}` contains a separator")]
    SeparatorInSegment(String),
    #[error("unknown parameter `{0}`")]
    UnknownParameter(String),
    #[error("parameter `{0}` is given more than once")]
    RepeatedParameter(String),
}

/// The variables of a matched URI, decoded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Variables {
    values: BTreeMap<String, String>,
}

impl Variables {
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }
}

impl UriTemplate {
    /// Parses a template written in this crate. Panics on malformed templates (programming errors).
    pub fn new(source: &'static str) -> UriTemplate {
        let mut parts = Vec::new();
        let mut rest = source;
        while !rest.is_empty() {
            match rest.find('{') {
                Some(0) => {
                    let end = rest.find('}').unwrap_or_else(|| panic!("unclosed expression in {source}"));
                    let expr = &rest[1..end];
                    let part = if let Some(names) = expr.strip_prefix('?') {
                        Part::Query(names.split(',').map(str::to_owned).collect())
                    } else if let Some(name) = expr.strip_prefix('/') {
                        Part::PathExplode(name.strip_suffix('*').unwrap_or(name).to_owned())
                    } else {
                        Part::Simple(expr.to_owned())
                    };
                    parts.push(part);
                    rest = &rest[end + 1..];
                }
                Some(idx) => {
                    parts.push(Part::Literal(rest[..idx].to_owned()));
                    rest = &rest[idx..];
                }
                None => {
                    parts.push(Part::Literal(rest.to_owned()));
                    rest = "";
                }
            }
        }
        UriTemplate { source, parts }
    }

    pub fn as_str(&self) -> &'static str {
        self.source
    }

    /// The names of all variables, in template order.
    pub fn variable_names(&self) -> Vec<&str> {
        let mut res = Vec::new();
        for part in &self.parts {
            match part {
                Part::Literal(_) => {}
                Part::Simple(name) | Part::PathExplode(name) => res.push(name.as_str()),
                Part::Query(names) => res.extend(names.iter().map(String::as_str)),
            }
        }
        res
    }

    /// `Ok(None)` when the URI does not have this template's shape.
    pub fn matches(&self, uri: &str) -> Result<Option<Variables>, TemplateError> {
        let mut vars = Variables::default();
        let mut rest = uri;
        for (idx, part) in self.parts.iter().enumerate() {
            let next_literal = match self.parts.get(idx + 1) {
                Some(Part::Literal(lit)) => Some(lit.as_str()),
                _ => None,
            };
            match part {
                Part::Literal(lit) => match rest.strip_prefix(lit.as_str()) {
                    Some(tail) => rest = tail,
                    None => return Ok(None),
                },
                Part::Simple(name) => {
                    let end = match next_literal {
                        Some(lit) => match rest.find(lit) {
                            Some(end) => end,
                            None => return Ok(None),
                        },
                        None => rest.find(['?', '#']).unwrap_or(rest.len()),
                    };
                    let raw = &rest[..end];
                    if raw.is_empty() || raw.contains('/') {
                        return Ok(None);
                    }
                    let value = decode(raw)?;
                    if value.contains('/') {
                        return Err(TemplateError::SeparatorInSegment(value));
                    }
                    vars.values.insert(name.clone(), value);
                    rest = &rest[end..];
                }
                Part::PathExplode(name) => {
                    let end = rest.find('?').unwrap_or(rest.len());
                    let raw = &rest[..end];
                    if !raw.is_empty() && !raw.starts_with('/') {
                        return Ok(None);
                    }
                    let mut segments = Vec::new();
                    for segment in raw.split('/').skip(1) {
                        let decoded = decode(segment)?;
                        if decoded.contains('/') || decoded.contains('\\') {
                            return Err(TemplateError::SeparatorInSegment(decoded));
                        }
                        segments.push(decoded);
                    }
                    // A trailing slash is kept so that `project/` names the root.
                    vars.values.insert(name.clone(), segments.join("/"));
                    rest = &rest[end..];
                }
                Part::Query(names) => {
                    let Some(query) = rest.strip_prefix('?') else {
                        if rest.is_empty() {
                            continue;
                        }
                        return Ok(None);
                    };
                    for pair in query.split('&').filter(|p| !p.is_empty()) {
                        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                        let key = decode(key)?;
                        if !names.contains(&key) {
                            return Err(TemplateError::UnknownParameter(key));
                        }
                        if vars.values.contains_key(&key) {
                            return Err(TemplateError::RepeatedParameter(key));
                        }
                        vars.values.insert(key, decode(value)?);
                    }
                    rest = "";
                }
            }
        }
        Ok(rest.is_empty().then_some(vars))
    }
}

/// Strict percent-decoding: every `%` starts two hex digits, the result is UTF-8, `+` is literal.
fn decode(raw: &str) -> Result<String, TemplateError> {
    let bytes = raw.as_bytes();
    let mut idx = 0;
    while idx < bytes.len() {
        if bytes[idx] == b'%' {
            let ok = bytes.len() >= idx + 3 && bytes[idx + 1].is_ascii_hexdigit() && bytes[idx + 2].is_ascii_hexdigit();
            if !ok {
                return Err(TemplateError::BadEncoding(raw.to_owned()));
            }
            idx += 3;
        } else {
            idx += 1;
        }
    }
    percent_encoding::percent_decode_str(raw)
        .decode_utf8()
        .map(|s| s.into_owned())
        .map_err(|_| TemplateError::BadEncoding(raw.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Variables {
        Variables { values: pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect() }
    }

    #[test]
    fn path_explode_decodes_segments() {
        let t = UriTemplate::new("forgemcp://workspace/file{/path*}");
        assert_eq!(
            t.matches("forgemcp://workspace/file/project/src/my%20file.cpp").unwrap(),
            Some(vars(&[("path", "project/src/my file.cpp")]))
        );
        assert_eq!(
            t.matches("forgemcp://workspace/file/project/a+b.cpp").unwrap(),
            Some(vars(&[("path", "project/a+b.cpp")]))
        );
        assert_eq!(t.matches("forgemcp://workspace/file/project/").unwrap(), Some(vars(&[("path", "project/")])));
        assert_eq!(t.matches("forgemcp://workspace/raw/project/x").unwrap(), None);
        assert_eq!(t.matches("forgemcp://workspace/filex").unwrap(), None);
    }

    #[test]
    fn encoded_separators_are_rejected() {
        let t = UriTemplate::new("forgemcp://workspace/file{/path*}");
        assert_eq!(
            t.matches("forgemcp://workspace/file/project/a%2F..%2Fb").unwrap_err(),
            TemplateError::SeparatorInSegment("a/../b".into())
        );
        assert!(matches!(
            t.matches("forgemcp://workspace/file/project/a%5Cb"),
            Err(TemplateError::SeparatorInSegment(_))
        ));
        assert!(matches!(t.matches("forgemcp://workspace/file/project/%zz"), Err(TemplateError::BadEncoding(_))));
        assert!(matches!(t.matches("forgemcp://workspace/file/project/%ff"), Err(TemplateError::BadEncoding(_))));
    }

    #[test]
    fn query_parameters_are_optional_and_decoded() {
        let t = UriTemplate::new("forgemcp://workspace/search{?query,path,extensions}");
        assert_eq!(t.matches("forgemcp://workspace/search").unwrap(), Some(vars(&[])));
        assert_eq!(
            t.matches("forgemcp://workspace/search?query=a%20b+c&extensions=").unwrap(),
            Some(vars(&[("query", "a b+c"), ("extensions", "")]))
        );
        assert_eq!(
            t.matches("forgemcp://workspace/search?nope=1").unwrap_err(),
            TemplateError::UnknownParameter("nope".into())
        );
        assert_eq!(
            t.matches("forgemcp://workspace/search?query=a&query=b").unwrap_err(),
            TemplateError::RepeatedParameter("query".into())
        );
    }

    #[test]
    fn simple_variables_stop_at_the_next_literal() {
        let t = UriTemplate::new("forgemcp://workspace/results/{result_id}/{name}.json");
        assert_eq!(
            t.matches("forgemcp://workspace/results/abc/diff.json").unwrap(),
            Some(vars(&[("result_id", "abc"), ("name", "diff")]))
        );
        assert_eq!(t.matches("forgemcp://workspace/results/abc/diff.md").unwrap(), None);
        assert_eq!(t.matches("forgemcp://workspace/results/abc/x/diff.json").unwrap(), None);
        let p = UriTemplate::new("forgemcp://processes/{process_id}");
        assert_eq!(p.matches("forgemcp://processes/12").unwrap(), Some(vars(&[("process_id", "12")])));
        assert_eq!(p.matches("forgemcp://processes").unwrap(), None);
        assert_eq!(p.variable_names(), vec!["process_id"]);
    }
}
