//! The exact command of one CTest test (`debug_launch` with `test` and `profile`; without a profile, the
//! first one): its command line,
//! working directory and environment as CTest's JSON model (`ctest --show-only=json-v1`) gives them,
//! for the profile's first test execution (its build directory or first test preset).
//!
//! Architecture invariant: reads CTest's model only; starts nothing but `ctest --show-only`.

use super::crashes::model_tests;
use super::output::Reporter;
use super::profile::Operation;
use super::{CmakeService, Error, Selection, unusable};
use crate::call::Call;
use crate::workspace::path::QualifiedPath;

/// A CTest test's command as qualified paths, ready for the debugger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestCommand {
    pub executable: QualifiedPath,
    pub arguments: Vec<String>,
    pub cwd: QualifiedPath,
    /// `ENVIRONMENT`: `KEY=VALUE` on top of the server's environment.
    pub env: Vec<String>,
}

impl CmakeService {
    /// The command CTest runs for `test` in `profile`; a test CTest does not know, or one whose
    /// program is not a built file in the project or storage, is an argument error.
    pub async fn test_command(&self, profile: Option<&str>, test: &str, call: &Call) -> Result<TestCommand, Error> {
        let argument = |argument: &'static str| move |reason: String| Error::Argument { argument, reason };
        let profiles: Vec<String> = profile.into_iter().map(str::to_owned).collect();
        let selection = Selection { profiles: profile.map(|_| profiles.as_slice()), presets: None };
        let reporter = Reporter::start(&call.progress, "Reading CTest's tests");
        let executions = self.executions(&selection, Operation::Test, &reporter, call).await?;
        let (profile, execution) = match executions.into_iter().next() {
            Some((Ok(profile), Ok(execution))) => (profile, execution),
            Some((profile, execution)) => return Err(argument("profile")(unusable(profile, execution).1)),
            None => return Err(argument("profile")("the profile has no test execution".to_owned())),
        };
        let listing = self.show_only(&profile, &execution, call).await.ok_or_else(|| {
            argument("test")(format!(
                "CTest lists no tests for profile `{}` (configure and build it first)",
                profile.name
            ))
        })?;
        let tests = model_tests(&listing);
        let Some(model) = tests.get(test) else {
            let mut names: Vec<&String> = tests.keys().collect();
            names.sort();
            let names: Vec<String> = names.iter().take(40).map(|n| format!("`{n}`")).collect();
            return Err(argument("test")(format!(
                "CTest knows no test `{test}` in profile `{}`; its tests are {}",
                profile.name,
                if names.is_empty() { "none".to_owned() } else { names.join(", ") }
            )));
        };
        let roots = self.roots();
        let qualified = |path: &std::path::Path, what: &str| {
            roots.qualify(path).filter(QualifiedPath::is_managed).ok_or_else(|| {
                argument("test")(format!(
                    "the {what} of test `{test}`, `{}`, is not in the project or storage",
                    path.display()
                ))
            })
        };
        let program = model
            .command
            .first()
            .ok_or_else(|| argument("test")(format!("CTest's model has no command for test `{test}`")))?;
        let executable = qualified(std::path::Path::new(program), "program")?;
        let cwd = match &model.cwd {
            Some(cwd) => qualified(cwd, "working directory")?,
            None => QualifiedPath::area_root(crate::workspace::path::Area::Project),
        };
        Ok(TestCommand { executable, arguments: model.command[1..].to_vec(), cwd, env: model.env.clone() })
    }
}
