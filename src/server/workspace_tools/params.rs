//! Query parameters of the Markdown workspace templates (`?path=…&depth=…`): strict parsing with
//! errors that name the parameter.
//!
//! Resource URIs take qualified paths only (`project/…`, `storage/…`); `root/…` names nothing a
//! resource can show ("not found"), and shorthands such as `src/x` are invalid parameters.

use std::num::NonZeroU32;

use crate::server::resources::ReadError;
use crate::server::uri_template::Variables;
use crate::workspace::WorkspaceService;
use crate::workspace::path::QualifiedPath;

fn invalid(parameter: &str, reason: impl std::fmt::Display) -> ReadError {
    ReadError::InvalidParams(format!("invalid parameter `{parameter}`: {reason}"))
}

/// A path parameter; `default` applies when the parameter is absent.
pub fn path(
    workspace: &WorkspaceService,
    vars: &Variables,
    parameter: &str,
    default: Option<&str>,
) -> Result<QualifiedPath, ReadError> {
    let raw = match (vars.get(parameter), default) {
        (Some(raw), _) => raw,
        (None, Some(default)) => default,
        (None, None) => return Err(invalid(parameter, "the parameter is required")),
    };
    let first = raw.split('/').next().unwrap_or_default();
    match first {
        "project" | "storage" => {}
        "root" => {
            return Err(ReadError::NotFound(format!(
                "`{raw}` is outside the workspace; resources show project/… and storage/… only"
            )));
        }
        _ => {
            return Err(invalid(
                parameter,
                format_args!("`{raw}` is not a qualified path; write project/… or storage/…"),
            ));
        }
    }
    workspace.parse(raw).map_err(|err| invalid(parameter, err))
}

/// `depth`: a positive integer, or `all` for the whole tree; `default` when absent.
pub fn depth(vars: &Variables, default: Option<NonZeroU32>) -> Result<Option<NonZeroU32>, ReadError> {
    let Some(raw) = vars.get("depth") else { return Ok(default) };
    if raw == "all" {
        return Ok(None);
    }
    if !raw.is_empty()
        && raw.bytes().all(|b| b.is_ascii_digit())
        && let Ok(Some(depth)) = raw.parse::<u32>().map(NonZeroU32::new)
    {
        return Ok(Some(depth));
    }
    Err(invalid("depth", format_args!("`{raw}` is neither a positive integer nor `all`")))
}

/// A boolean parameter: exactly `true` or `false`; `default` when absent.
pub fn boolean(vars: &Variables, parameter: &str, default: bool) -> Result<bool, ReadError> {
    match vars.get(parameter) {
        None => Ok(default),
        Some("true") => Ok(true),
        Some("false") => Ok(false),
        Some(raw) => Err(invalid(parameter, format_args!("`{raw}` is neither `true` nor `false`"))),
    }
}

/// A text parameter that must not be empty; `default` when absent.
pub fn text<'a>(vars: &'a Variables, parameter: &str, default: &'a str) -> Result<&'a str, ReadError> {
    match vars.get(parameter) {
        None => Ok(default),
        Some("") => Err(invalid(parameter, "the value is empty")),
        Some(raw) => Ok(raw),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::uri_template::UriTemplate;
    use crate::workspace::path::Roots;

    fn vars(query: &str) -> Variables {
        let template = UriTemplate::new("forgemcp://t{?path,depth,include_hidden,pattern}");
        template.matches(&format!("forgemcp://t{query}")).unwrap().unwrap()
    }

    fn message(err: ReadError) -> String {
        match err {
            ReadError::InvalidParams(m) => format!("invalid: {m}"),
            ReadError::NotFound(m) => format!("not found: {m}"),
        }
    }

    #[test]
    fn depth_is_positive_or_all() {
        let one = NonZeroU32::new(1);
        assert_eq!(depth(&vars(""), one).unwrap(), one);
        assert_eq!(depth(&vars("?depth=3"), one).unwrap(), NonZeroU32::new(3));
        assert_eq!(depth(&vars("?depth=all"), one).unwrap(), None);
        for bad in ["0", "x", "", "-1", "+2", "1.5", "ALL", "99999999999"] {
            let err = message(depth(&vars(&format!("?depth={bad}")), one).unwrap_err());
            assert!(err.starts_with("invalid: invalid parameter `depth`"), "{bad:?}: {err}");
        }
    }

    #[test]
    fn booleans_are_spelled_out() {
        assert!(!boolean(&vars(""), "include_hidden", false).unwrap());
        assert!(boolean(&vars("?include_hidden=true"), "include_hidden", false).unwrap());
        assert!(!boolean(&vars("?include_hidden=false"), "include_hidden", true).unwrap());
        for bad in ["yes", "1", "True", ""] {
            let err = message(boolean(&vars(&format!("?include_hidden={bad}")), "include_hidden", false).unwrap_err());
            assert!(err.contains("`include_hidden`"), "{bad:?}: {err}");
        }
    }

    #[test]
    fn paths_must_be_qualified() {
        let ws = WorkspaceService::new(Roots::new("/w/proj".into(), "/w/.proj.forgemcp".into()));
        let get = |query: &str| path(&ws, &vars(query), "path", Some("project/")).map(|p| p.to_string());
        assert_eq!(get("").unwrap(), "project/");
        assert_eq!(get("?path=project/src/").unwrap(), "project/src");
        assert_eq!(get("?path=storage").unwrap(), "storage/");
        assert!(message(get("?path=src").unwrap_err()).starts_with("invalid: invalid parameter `path`"));
        assert!(message(get("?path=").unwrap_err()).starts_with("invalid: invalid parameter `path`"));
        assert!(message(get("?path=project/../x").unwrap_err()).starts_with("invalid: invalid parameter `path`"));
        assert!(message(get("?path=root/etc").unwrap_err()).starts_with("not found:"));
        let required = path(&ws, &vars(""), "path", None).unwrap_err();
        assert!(message(required).contains("required"));
    }

    #[test]
    fn text_parameters_must_not_be_empty() {
        assert_eq!(text(&vars(""), "pattern", "*").unwrap(), "*");
        assert_eq!(text(&vars("?pattern=*.cpp"), "pattern", "*").unwrap(), "*.cpp");
        assert!(text(&vars("?pattern="), "pattern", "*").is_err());
    }
}
