//! The targets of a File API `codemodel-v2` reply as `cmake_targets`, the affected-test selection
//! and the orphan notes need them: per configuration each target's name, type, artifacts, direct
//! dependencies, sources (compiled or not), the libraries its link line names, and the
//! `CMakeLists.txt` line that defines it (from the backtrace graph).
//!
//! Architecture invariant: parsing is pure (the codemodel text and a function reading one target
//! file in, values out); every path comes out absolute and lexically normal (relative ones are
//! resolved against the reply's source or build directory).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::workspace::path::lexically_normal;

/// One target of one configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub name: String,
    pub id: String,
    /// `executable`, `static_library`, `shared_library`, `module_library`, `object_library`,
    /// `interface_library` or `utility` (CMake's `type`, lowercase).
    pub kind: String,
    pub artifacts: Vec<PathBuf>,
    /// The names of the targets it depends on directly (links or `add_dependencies`).
    pub dependencies: Vec<String>,
    pub sources: Vec<Source>,
    /// Files its link line names (imported libraries such as `libgtest.a`), as absolute paths.
    pub link_files: Vec<PathBuf>,
    /// The command that defined it (`add_executable`, `add_library`, …): file and line.
    pub defined_at: Option<(PathBuf, u32)>,
}

/// A source of a target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    pub path: PathBuf,
    /// Whether a compile group compiles it (headers listed as sources are not compiled).
    pub compiled: bool,
}

/// The targets of one configuration of a codemodel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Configuration {
    /// `Debug`, `Release`, … (empty for a single-configuration generator without a build type).
    pub name: String,
    pub source: PathBuf,
    pub build: PathBuf,
    pub targets: Vec<Target>,
}

impl Configuration {
    pub fn target(&self, name: &str) -> Option<&Target> {
        self.targets.iter().find(|t| t.name == name)
    }

    /// `name` and every target it depends on, directly or through others, each once, `name` first.
    pub fn closure(&self, name: &str) -> Vec<&Target> {
        let mut res: Vec<&Target> = Vec::new();
        let mut pending = vec![name.to_owned()];
        while let Some(next) = pending.pop() {
            if res.iter().any(|t| t.name == next) {
                continue;
            }
            if let Some(target) = self.target(&next) {
                pending.extend(target.dependencies.iter().rev().cloned());
                res.push(target);
            }
        }
        res
    }

    /// The target whose artifact is `path`.
    pub fn target_with_artifact(&self, path: &Path) -> Option<&Target> {
        self.targets.iter().find(|t| t.artifacts.iter().any(|a| a == path))
    }

    /// The targets that compile `path`.
    pub fn compiling(&self, path: &Path) -> Vec<&Target> {
        self.targets.iter().filter(|t| t.sources.iter().any(|s| s.compiled && s.path == path)).collect()
    }
}

/// Parses a `codemodel-v2` object; `read` gives the text of a target's `jsonFile`. A target whose
/// file cannot be read keeps its name and id only.
pub fn parse(codemodel: &str, read: impl Fn(&str) -> Option<String>) -> Result<Vec<Configuration>, String> {
    let model: Value = serde_json::from_str(codemodel).map_err(|err| format!("the codemodel is not JSON: {err}"))?;
    let paths = model.get("paths").ok_or("the codemodel has no `paths`")?;
    let source = PathBuf::from(paths.get("source").and_then(Value::as_str).ok_or("the codemodel has no source path")?);
    let build = PathBuf::from(paths.get("build").and_then(Value::as_str).ok_or("the codemodel has no build path")?);
    let mut res = Vec::new();
    for configuration in model.get("configurations").and_then(Value::as_array).into_iter().flatten() {
        let listed = configuration.get("targets").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        let ids: Vec<(String, String)> = listed
            .iter()
            .filter_map(|t| Some((t.get("id")?.as_str()?.to_owned(), t.get("name")?.as_str()?.to_owned())))
            .collect();
        let mut targets = Vec::new();
        for (listing, (id, name)) in listed.iter().zip(&ids) {
            let detail = listing
                .get("jsonFile")
                .and_then(Value::as_str)
                .and_then(&read)
                .and_then(|text| serde_json::from_str::<Value>(&text).ok())
                .unwrap_or(Value::Null);
            targets.push(target(&detail, id, name, &ids, &source, &build));
        }
        let name = configuration.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
        res.push(Configuration { name, source: source.clone(), build: build.clone(), targets });
    }
    Ok(res)
}

fn absolute(base: &Path, path: &str) -> PathBuf {
    lexically_normal(&base.join(path))
}

fn target(detail: &Value, id: &str, name: &str, ids: &[(String, String)], source: &Path, build: &Path) -> Target {
    let list = |key: &str| detail.get(key).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let artifacts =
        list("artifacts").iter().filter_map(|a| a.get("path")?.as_str()).map(|path| absolute(build, path)).collect();
    let dependencies = list("dependencies")
        .iter()
        .filter_map(|d| d.get("id")?.as_str())
        .filter_map(|dep| ids.iter().find(|(id, _)| id == dep).map(|(_, name)| name.clone()))
        .collect();
    let sources = list("sources")
        .iter()
        .filter_map(|s| {
            let path = absolute(source, s.get("path")?.as_str()?);
            Some(Source { path, compiled: s.get("compileGroupIndex").is_some() })
        })
        .collect();
    let link_files = detail
        .get("link")
        .and_then(|link| link.get("commandFragments"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|f| f.get("role").and_then(Value::as_str) == Some("libraries"))
        .filter_map(|f| f.get("fragment")?.as_str())
        .filter(|f| !f.starts_with('-'))
        .map(|f| absolute(build, f.trim_matches('"')))
        .collect();
    let defined_at = detail.get("backtrace").and_then(Value::as_u64).and_then(|node| {
        let graph = detail.get("backtraceGraph")?;
        let node = graph.get("nodes")?.get(usize::try_from(node).ok()?)?;
        let file = graph.get("files")?.get(usize::try_from(node.get("file")?.as_u64()?).ok()?)?.as_str()?;
        let line = u32::try_from(node.get("line")?.as_u64()?).ok()?;
        Some((absolute(source, file), line))
    });
    Target {
        name: name.to_owned(),
        id: id.to_owned(),
        kind: detail.get("type").and_then(Value::as_str).unwrap_or("UTILITY").to_ascii_lowercase(),
        artifacts,
        dependencies,
        sources,
        link_files,
        defined_at,
    }
}

/// The codemodel of a build directory's newest reply, every configuration; `None` without a
/// readable reply.
pub fn read(build: &Path) -> Option<Vec<Configuration>> {
    use super::file_api::{codemodel_reply, latest_index, read_reply};
    let index = latest_index(build)?;
    let file = codemodel_reply(&read_reply(build, &index.name).ok()?)?;
    parse(&read_reply(build, &file).ok()?, |name| read_reply(build, name).ok()).ok()
}

#[cfg(test)]
mod tests;
