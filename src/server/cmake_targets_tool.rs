//! `cmake_targets`: the targets of each profile's codemodel (type, artifact, dependencies, source
//! count, defining `CMakeLists.txt` line, tests running the artifact), or with `path` the targets
//! compiling or including a file. Wire shapes and registration.
//!
//! Architecture invariant: a wrapped `{"result": [...]}` list, one item per profile or build
//! preset; an unconfigured profile is its item's `error`; bad arguments are tool errors.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::call::Call;
use crate::cmake::targets::{TargetInfo, TargetsOutcome, TargetsRequest, Via};
use crate::cmake::{CmakeService, Selection};
use crate::render;
use crate::server::cmake_args::names_argument;
use crate::server::registry::{Annotations, Registry, ToolError, ToolOutput, ToolSpec};
use crate::widgets::{Icon, Widget};

/// Targets listed per profile when `limit` is not given.
const DEFAULT_LIMIT: usize = 200;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CmakeTargetsArgs {
    /// Profile names; null or [] = all.
    #[serde(default)]
    pub profiles: Option<Vec<String>>,
    /// Build presets; null = all.
    #[serde(default)]
    pub presets: Option<Vec<String>>,
    /// Only targets compiling or including this project/ file.
    #[serde(default)]
    pub path: Option<String>,
    /// Most targets per profile (default 200).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub limit: Option<u32>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct TargetItem {
    pub name: String,
    /// executable, static_library, shared_library, module_library, object_library,
    /// interface_library or utility.
    #[serde(rename = "type")]
    pub kind: String,
    pub artifact: Option<String>,
    pub dependencies: Vec<String>,
    pub sources: usize,
    /// `project/CMakeLists.txt:42`.
    pub defined_at: Option<String>,
    /// CTest tests that run its artifact.
    pub tests: Vec<String>,
    /// With path: compiles | includes.
    pub via: Option<&'static str>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename = "CMakeTargetsResult")]
pub struct CmakeTargetsItem {
    pub profile: String,
    pub preset: Option<String>,
    pub configuration: Option<String>,
    pub targets: Vec<TargetItem>,
    /// Targets that matched (more than listed when limit cut).
    pub total: usize,
    pub note: Option<String>,
    /// The sole outcome field: null = the codemodel was read.
    pub error: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct CmakeTargetsResult {
    pub result: Vec<CmakeTargetsItem>,
}

impl From<&TargetInfo> for TargetItem {
    fn from(t: &TargetInfo) -> TargetItem {
        TargetItem {
            name: t.name.clone(),
            kind: t.kind.clone(),
            artifact: t.artifact.as_ref().map(ToString::to_string),
            dependencies: t.dependencies.clone(),
            sources: t.sources,
            defined_at: t.defined_at.as_ref().map(|(path, line)| format!("{path}:{line}")),
            tests: t.tests.clone(),
            via: t.via.map(|via| match via {
                Via::Compiles => "compiles",
                Via::Includes => "includes",
            }),
        }
    }
}

impl From<&TargetsOutcome> for CmakeTargetsItem {
    fn from(o: &TargetsOutcome) -> CmakeTargetsItem {
        CmakeTargetsItem {
            profile: o.profile.clone(),
            preset: o.preset.clone(),
            configuration: o.configuration.clone(),
            targets: o.targets.iter().map(Into::into).collect(),
            total: o.total,
            note: o.note.clone(),
            error: o.error.clone(),
        }
    }
}

pub fn register(registry: &mut Registry, cmake: &Arc<CmakeService>) {
    let service = cmake.clone();
    registry.add(
        ToolSpec {
            name: "cmake_targets",
            title: "CMake targets",
            description: "List each configured profile's CMake targets (type, artifact, dependencies, defining \
                          CMakeLists.txt line, tests); with path, the targets compiling or including that file.",
            annotations: Annotations::CmakeList,
            widget: Widget::CmakeTargets,
            icon: Icon::Cmake,
        },
        move |args: CmakeTargetsArgs, call: Call| {
            let service = service.clone();
            async move {
                let path = args
                    .path
                    .as_deref()
                    .map(|p| service.parse_path_argument(p))
                    .transpose()
                    .map_err(|err| ToolError::user(&err))?;
                let limit = match args.limit {
                    Some(0) => {
                        return Err(ToolError::User("Invalid argument `limit`: it must be at least 1.".to_owned()));
                    }
                    Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
                    None => DEFAULT_LIMIT,
                };
                let presets = args.presets.map(|p| names_argument("presets", Some(p), "every preset")).transpose()?;
                let selection = Selection { profiles: args.profiles.as_deref(), presets: presets.as_deref() };
                let request = TargetsRequest { path, limit };
                let outcomes =
                    service.targets(&selection, &request, &call).await.map_err(|err| ToolError::user(&err))?;
                let text = render::cmake_targets::targets_text(&outcomes);
                Ok(ToolOutput::new(text, CmakeTargetsResult { result: outcomes.iter().map(Into::into).collect() }))
            }
        },
    );
}
