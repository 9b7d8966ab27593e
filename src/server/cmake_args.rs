//! The arguments of the CMake tools (wire shapes of INTERFACE.md §6, with issue 29's `presets` and
//! a plain number of seconds for `timeout`) and their checks.
//!
//! Architecture invariant: an argument error names the argument and never a Rust type.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::cmake;
use crate::process::Timeout;
use crate::server::registry::ToolError;

/// Seconds, or {total, idle}.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
#[schemars(inline)]
pub enum ProcessTimeoutArg {
    Seconds(#[schemars(range(min = 0))] f64),
    Limits(ProcessTimeoutLimits),
}

// `ProcessTimeout`: seconds (≥ 0); null or absent disables that limit (a comment, not a doc: the
// schema of every CMake tool would repeat it).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(inline)]
pub struct ProcessTimeoutLimits {
    /// From the start.
    #[serde(default)]
    #[schemars(range(min = 0))]
    pub total: Option<f64>,
    /// Without output.
    #[serde(default)]
    #[schemars(range(min = 0))]
    pub idle: Option<f64>,
}

fn default_timeout() -> ProcessTimeoutArg {
    ProcessTimeoutArg::Seconds(cmake::DEFAULT_TIMEOUT.total.map_or(0.0, |total| total.as_secs_f64()))
}

impl ProcessTimeoutArg {
    pub fn to_timeout(self) -> Result<Timeout, ToolError> {
        let limit = |name: &str, value: Option<f64>| -> Result<Option<Duration>, ToolError> {
            let Some(secs) = value else { return Ok(None) };
            if !secs.is_finite() || secs < 0.0 {
                return Err(ToolError::User(format!(
                    "Invalid argument `{name}`: it must be a finite number of seconds, at least 0."
                )));
            }
            Duration::try_from_secs_f64(secs)
                .map(Some)
                .map_err(|_| ToolError::User(format!("Invalid argument `{name}`: {secs} seconds is too long.")))
        };
        match self {
            ProcessTimeoutArg::Seconds(secs) => Ok(Timeout { total: limit("timeout", Some(secs))?, idle: None }),
            ProcessTimeoutArg::Limits(limits) => {
                Ok(Timeout { total: limit("timeout.total", limits.total)?, idle: limit("timeout.idle", limits.idle)? })
            }
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CmakeProfilesArgs {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CmakeConfigureArgs {
    /// Profile names; null or [] = all.
    #[serde(default)]
    pub profiles: Option<Vec<String>>,
    /// Presets to run; null = all.
    #[serde(default)]
    pub presets: Option<Vec<String>>,
    /// Per execution.
    #[serde(default = "default_timeout")]
    pub timeout: ProcessTimeoutArg,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CmakeBuildArgs {
    /// Profile names; null or [] = all.
    #[serde(default)]
    pub profiles: Option<Vec<String>>,
    /// Presets to run; null = all.
    #[serde(default)]
    pub presets: Option<Vec<String>>,
    /// Targets to build; null = the default target.
    #[serde(default)]
    pub targets: Option<Vec<String>>,
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub parallel: Option<u32>,
    #[serde(default = "default_timeout")]
    pub timeout: ProcessTimeoutArg,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CmakeTestArgs {
    /// Profile names; null or [] = all.
    #[serde(default)]
    pub profiles: Option<Vec<String>>,
    /// Presets to run; null = all.
    #[serde(default)]
    pub presets: Option<Vec<String>>,
    /// Exact test names; null = all tests.
    #[serde(default)]
    pub names: Option<Vec<String>>,
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub parallel: Option<u32>,
    /// "all" (default) | "affected" (inputs changed since the last pass) | "failed".
    #[serde(default)]
    pub select: Option<String>,
    /// Run each test until it fails, at most N times (flaky tests).
    #[serde(default)]
    #[schemars(range(min = 2, max = 1000))]
    pub repeat_until_fail: Option<i64>,
    #[serde(default = "default_timeout")]
    pub timeout: ProcessTimeoutArg,
}

fn default_cwd() -> String {
    "project/".to_owned()
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CmakeRunTestArgs {
    /// A built executable in project/ or storage/.
    pub executable: String,
    /// Literal arguments (spaces and empty strings kept).
    #[serde(default)]
    pub arguments: Option<Vec<String>>,
    /// Existing working directory in project/ or storage/.
    #[serde(default = "default_cwd")]
    pub cwd: String,
    #[serde(default = "default_timeout")]
    pub timeout: ProcessTimeoutArg,
}

/// A non-empty list of non-empty names, or absent.
pub fn names_argument(argument: &str, names: Option<Vec<String>>, what: &str) -> Result<Vec<String>, ToolError> {
    match names {
        None => Ok(Vec::new()),
        Some(names) if names.is_empty() => {
            Err(ToolError::User(format!("Invalid argument `{argument}`: the list is empty; omit it for {what}.")))
        }
        Some(names) if names.iter().any(|name| name.is_empty()) => {
            Err(ToolError::User(format!("Invalid argument `{argument}`: names must not be empty.")))
        }
        Some(names) => Ok(names),
    }
}

pub fn parallel_argument(parallel: Option<u32>) -> Result<Option<u32>, ToolError> {
    match parallel {
        Some(0) => Err(ToolError::User("Invalid argument `parallel`: it must be at least 1.".to_owned())),
        other => Ok(other),
    }
}

/// `select`: one of the three values.
pub fn select_argument(select: Option<&str>) -> Result<cmake::Select, ToolError> {
    select.map_or(Ok(cmake::Select::All), |text| {
        cmake::Select::parse(text).ok_or_else(|| {
            ToolError::User(format!(
                "Invalid argument `select`: {text:?} is not one of \"all\", \"affected\", \"failed\"."
            ))
        })
    })
}

/// `repeat_until_fail`: 2 to 1000.
pub fn repeat_argument(repeat: Option<i64>) -> Result<Option<u32>, ToolError> {
    let range = cmake::repeat::REPEAT_RANGE;
    repeat
        .map(|n| {
            u32::try_from(n).ok().filter(|n| range.contains(n)).ok_or_else(|| {
                ToolError::User(format!(
                    "Invalid argument `repeat_until_fail`: {n} is not between {} and {}.",
                    range.start(),
                    range.end()
                ))
            })
        })
        .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts() {
        let t = |total, idle| ProcessTimeoutArg::Limits(ProcessTimeoutLimits { total, idle }).to_timeout();
        assert_eq!(t(Some(30.0), None).unwrap(), Timeout::total(Duration::from_secs(30)));
        assert_eq!(t(None, None).unwrap(), Timeout::NONE);
        assert_eq!(default_timeout().to_timeout().unwrap(), cmake::DEFAULT_TIMEOUT);
        let Err(ToolError::User(message)) = t(Some(-1.0), None) else { panic!("negative total accepted") };
        assert_eq!(message, "Invalid argument `timeout.total`: it must be a finite number of seconds, at least 0.");
        assert!(t(None, Some(f64::INFINITY)).is_err());
        let seconds =
            |value: serde_json::Value| serde_json::from_value::<ProcessTimeoutArg>(value).unwrap().to_timeout();
        assert_eq!(seconds(serde_json::json!(120)).unwrap(), Timeout::total(Duration::from_secs(120)));
        assert_eq!(seconds(serde_json::json!({ "idle": 5 })).unwrap().idle, Some(Duration::from_secs(5)));
        let Err(ToolError::User(message)) = seconds(serde_json::json!(-2)) else { panic!("negative seconds accepted") };
        assert_eq!(message, "Invalid argument `timeout`: it must be a finite number of seconds, at least 0.");
    }

    #[test]
    fn name_lists() {
        assert_eq!(names_argument("targets", None, "the default target").unwrap(), Vec::<String>::new());
        let Err(ToolError::User(message)) = names_argument("targets", Some(Vec::new()), "the default target") else {
            panic!("empty list accepted")
        };
        assert_eq!(message, "Invalid argument `targets`: the list is empty; omit it for the default target.");
        assert!(names_argument("names", Some(vec![String::new()]), "every test").is_err());
        assert!(parallel_argument(Some(0)).is_err());
    }
}
