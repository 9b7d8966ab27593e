//! CMake's File API: the queries ForgeMCP places in a build directory before configuring, and the
//! parts of a reply it reads afterwards (the reply index and the `cmakeFiles-v1` object with the
//! configuration's inputs and, from `cmakeFiles` 1.1 on, its `CONFIGURE_DEPENDS` globs).
//!
//! Architecture invariant: parsing is pure (text in, values out); the few file operations (writing
//! query files, finding the newest reply index, reading reply files) are small functions on absolute
//! paths inside a build directory the service has already checked.
//! Architecture invariant: a reply is only trusted when it is newer than the one present before the
//! run that should have produced it; an older reply never confirms anything.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Deserialize;
use serde_json::Value;

/// The client name of ForgeMCP's stateless queries.
pub const CLIENT: &str = "client-forgemcp";
/// The objects ForgeMCP asks for.
pub const QUERIES: [&str; 4] = ["codemodel-v2", "cache-v2", "toolchains-v1", "cmakeFiles-v1"];

/// `<build>/.cmake/api/v1/query/client-forgemcp` below a build directory, as path components.
pub const QUERY_DIR: [&str; 5] = [".cmake", "api", "v1", "query", CLIENT];
/// `<build>/.cmake/api/v1/reply`.
pub const REPLY_DIR: [&str; 4] = [".cmake", "api", "v1", "reply"];

fn join_all(base: &Path, components: &[&str]) -> PathBuf {
    let mut res = base.to_path_buf();
    res.extend(components);
    res
}

/// Creates the query directory and the empty query files that are missing. `build` exists and was
/// checked to be reached without links.
pub fn write_queries(build: &Path) -> std::io::Result<()> {
    let dir = join_all(build, &QUERY_DIR);
    std::fs::create_dir_all(&dir)?;
    for name in QUERIES {
        let path = dir.join(name);
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_file() => {}
            Ok(_) => return Err(std::io::Error::other(format!("the File API query `{name}` is not a regular file"))),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => std::fs::write(&path, b"")?,
            Err(err) => return Err(err),
        }
    }
    Ok(())
}

/// Whether `build` holds ForgeMCP's query directory already.
pub fn has_queries(build: &Path) -> bool {
    join_all(build, &QUERY_DIR).is_dir()
}

/// The newest reply index of a build directory: its file name and modification time. CMake names
/// index files `index-<timestamp>.json`; the lexicographically greatest one is current.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexStamp {
    pub name: String,
    pub modified: Option<SystemTime>,
}

/// The current reply index of `build`, if any.
pub fn latest_index(build: &Path) -> Option<IndexStamp> {
    let dir = join_all(build, &REPLY_DIR);
    let name = std::fs::read_dir(&dir)
        .ok()?
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| name.starts_with("index-") && name.ends_with(".json"))
        .max()?;
    let modified = std::fs::metadata(dir.join(&name)).and_then(|meta| meta.modified()).ok();
    Some(IndexStamp { name, modified })
}

/// Whether `after` is a new generation compared to `before`.
pub fn is_new(before: Option<&IndexStamp>, after: Option<&IndexStamp>) -> bool {
    match (before, after) {
        (_, None) => false,
        (None, Some(_)) => true,
        (Some(before), Some(after)) => before != after,
    }
}

/// Reads a reply file of `build` (index or object) as text.
pub fn read_reply(build: &Path, file_name: &str) -> Result<String, String> {
    if file_name.contains(['/', '\\']) || file_name.starts_with('.') {
        return Err(format!("the reply names the unexpected file `{file_name}`"));
    }
    let path = join_all(build, &REPLY_DIR).join(file_name);
    std::fs::read_to_string(&path).map_err(|err| format!("cannot read the File API reply `{file_name}`: {err}"))
}

/// The reply to one of ForgeMCP's queries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ObjectReply {
    /// The object's file in the reply directory.
    File(String),
    /// CMake could not answer the query (for example an unknown kind or version).
    Error(String),
}

/// The `cmakeFiles-v1` answer of a reply index: `None` when the index holds no answer to that query.
pub fn cmake_files_reply(index: &str) -> Result<Option<ObjectReply>, String> {
    let index: Value =
        serde_json::from_str(index).map_err(|err| format!("the File API reply index is not JSON: {err}"))?;
    let Some(answer) =
        index.get("reply").and_then(|reply| reply.get(CLIENT)).and_then(|client| client.get("cmakeFiles-v1"))
    else {
        return Ok(None);
    };
    if let Some(error) = answer.get("error").and_then(Value::as_str) {
        return Ok(Some(ObjectReply::Error(error.to_owned())));
    }
    match answer.get("jsonFile").and_then(Value::as_str) {
        Some(file) => Ok(Some(ObjectReply::File(file.to_owned()))),
        None => Err("the File API reply index answers cmakeFiles-v1 without a file".to_owned()),
    }
}

/// The `codemodel-v2` answer of a reply index, like [`cmake_files_reply`].
pub fn codemodel_reply(index: &str) -> Option<String> {
    let index: Value = serde_json::from_str(index).ok()?;
    let answer = index.get("reply")?.get(CLIENT)?.get("codemodel-v2")?;
    answer.get("jsonFile").and_then(Value::as_str).map(str::to_owned)
}

/// A target of the codemodel: its name, its object directory (`<dir>/CMakeFiles/<name>.dir`, relative
/// to the top build directory) and its artifacts (relative to it too).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CodemodelTarget {
    pub name: String,
    pub object_dir: String,
    pub artifacts: Vec<String>,
}

/// The codemodel of a build directory as the newest reply has it: `paths.build` (absolute) and the
/// targets of the first configuration (with each target file read for its artifacts). `None` when
/// there is no readable reply.
pub fn read_codemodel(build: &Path) -> Option<(PathBuf, Vec<CodemodelTarget>)> {
    let index = latest_index(build)?;
    let file = codemodel_reply(&read_reply(build, &index.name).ok()?)?;
    let model: Value = serde_json::from_str(&read_reply(build, &file).ok()?).ok()?;
    let top = PathBuf::from(model.get("paths")?.get("build")?.as_str()?);
    let configuration = model.get("configurations")?.as_array()?.first()?;
    let directories = configuration.get("directories").and_then(Value::as_array);
    let mut res = Vec::new();
    for target in configuration.get("targets").and_then(Value::as_array).into_iter().flatten() {
        let Some(name) = target.get("name").and_then(Value::as_str) else { continue };
        let dir = target
            .get("directoryIndex")
            .and_then(Value::as_u64)
            .and_then(|idx| directories?.get(usize::try_from(idx).ok()?)?.get("build")?.as_str())
            .filter(|dir| *dir != ".");
        let object_dir = match dir {
            Some(dir) => format!("{dir}/CMakeFiles/{name}.dir"),
            None => format!("CMakeFiles/{name}.dir"),
        };
        let artifacts = target
            .get("jsonFile")
            .and_then(Value::as_str)
            .and_then(|file| read_reply(build, file).ok())
            .and_then(|text| serde_json::from_str::<Value>(&text).ok())
            .and_then(|value| {
                let list = value.get("artifacts")?.as_array()?.iter();
                Some(list.filter_map(|a| a.get("path")?.as_str().map(str::to_owned)).collect())
            })
            .unwrap_or_default();
        res.push(CodemodelTarget { name: name.to_owned(), object_dir, artifacts });
    }
    Some((top, res))
}

/// The target whose build edge `edge` (an object file or a linked artifact, as Ninja or Make
/// printed it) belongs to.
pub fn target_of_edge<'a>(targets: &'a [CodemodelTarget], edge: &str) -> Option<&'a str> {
    let edge = edge.replace('\\', "/");
    targets
        .iter()
        .find(|t| edge.strip_prefix(t.object_dir.as_str()).is_some_and(|rest| rest.starts_with('/')))
        .or_else(|| targets.iter().find(|t| t.artifacts.contains(&edge)))
        .map(|t| t.name.as_str())
}

/// One input of the configuration as `cmakeFiles` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    /// Absolute path (relative reply paths are joined onto the source directory).
    pub path: PathBuf,
    pub is_generated: bool,
    pub is_external: bool,
    pub is_cmake: bool,
}

/// One `file(GLOB … CONFIGURE_DEPENDS)` whose result the build system re-checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlobDependent {
    /// The globbing expression as an absolute path pattern.
    pub expression: PathBuf,
    pub recurse: bool,
}

/// The `cmakeFiles` object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CmakeFiles {
    pub source: PathBuf,
    pub build: PathBuf,
    pub inputs: Vec<Input>,
    /// `Some` from version 1.1 on (an empty list when the project has no such globs); `None` for
    /// 1.0 replies, which do not say.
    pub globs: Option<Vec<GlobDependent>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawCmakeFiles {
    version: RawVersion,
    paths: RawPaths,
    inputs: Vec<RawInput>,
    #[serde(default)]
    globs_dependent: Option<Vec<RawGlob>>,
}

#[derive(Deserialize)]
struct RawVersion {
    major: u64,
    minor: u64,
}

#[derive(Deserialize)]
struct RawPaths {
    source: String,
    build: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawInput {
    path: String,
    #[serde(default)]
    is_generated: bool,
    #[serde(default)]
    is_external: bool,
    #[serde(default, rename = "isCMake")]
    is_cmake: bool,
}

#[derive(Deserialize)]
struct RawGlob {
    expression: String,
    #[serde(default)]
    recurse: bool,
}

/// Parses a `cmakeFiles` v1 object.
pub fn parse_cmake_files(text: &str) -> Result<CmakeFiles, String> {
    let raw: RawCmakeFiles =
        serde_json::from_str(text).map_err(|err| format!("the cmakeFiles reply cannot be read: {err}"))?;
    if raw.version.major != 1 {
        return Err(format!(
            "the cmakeFiles reply has the unsupported version {}.{}",
            raw.version.major, raw.version.minor
        ));
    }
    let source = PathBuf::from(&raw.paths.source);
    let inputs = raw
        .inputs
        .into_iter()
        .map(|input| Input {
            path: source.join(&input.path),
            is_generated: input.is_generated,
            is_external: input.is_external,
            is_cmake: input.is_cmake,
        })
        .collect();
    let globs = if raw.version.minor >= 1 {
        Some(
            raw.globs_dependent
                .unwrap_or_default()
                .into_iter()
                .map(|glob| GlobDependent { expression: PathBuf::from(glob.expression), recurse: glob.recurse })
                .collect(),
        )
    } else {
        None
    };
    Ok(CmakeFiles { source, build: PathBuf::from(raw.paths.build), inputs, globs })
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;

    /// The reply index CMake 3.25 wrote for the acceptance fixture (objects list shortened).
    const INDEX: &str = r#"{
	"cmake" : { "generator" : { "multiConfig" : false, "name" : "Ninja" },
		"version" : { "major" : 3, "minor" : 25, "patch" : 1, "string" : "3.25.1" } },
	"objects" : [ { "jsonFile" : "cmakeFiles-v1-57b14863d3302e16ebae.json", "kind" : "cmakeFiles", "version" : { "major" : 1, "minor" : 0 } } ],
	"reply" :
	{
		"client-forgemcp" :
		{
			"cache-v2" : { "jsonFile" : "cache-v2-ae9290b7dd4b01745b58.json", "kind" : "cache", "version" : { "major" : 2, "minor" : 0 } },
			"cmakeFiles-v1" : { "jsonFile" : "cmakeFiles-v1-57b14863d3302e16ebae.json", "kind" : "cmakeFiles", "version" : { "major" : 1, "minor" : 0 } },
			"codemodel-v2" : { "jsonFile" : "codemodel-v2-1d97b90f5c4292ce3bf6.json", "kind" : "codemodel", "version" : { "major" : 2, "minor" : 4 } },
			"toolchains-v1" : { "jsonFile" : "toolchains-v1-bb86b4a9f4804aa81012.json", "kind" : "toolchains", "version" : { "major" : 1, "minor" : 0 } }
		}
	}
}"#;

    #[test]
    fn reply_index() {
        expect![[r#"Ok(Some(File("cmakeFiles-v1-57b14863d3302e16ebae.json")))"#]]
            .assert_eq(&format!("{:?}", cmake_files_reply(INDEX)));
        let unanswered =
            r#"{"reply": {"client-forgemcp": {"cmakeFiles-v1": {"error": "unknown request kind 'cmakeFiles'"}}}}"#;
        expect![[r#"Ok(Some(Error("unknown request kind 'cmakeFiles'")))"#]]
            .assert_eq(&format!("{:?}", cmake_files_reply(unanswered)));
        expect![[r#"Ok(None)"#]].assert_eq(&format!("{:?}", cmake_files_reply(r#"{"reply": {}}"#)));
        assert!(cmake_files_reply("not json").unwrap_err().starts_with("the File API reply index is not JSON"));
    }

    /// The `cmakeFiles` 1.0 reply of CMake 3.25 for the acceptance fixture, CMake modules shortened.
    const CMAKE_FILES_1_0: &str = r#"{
	"inputs" :
	[
		{ "path" : "CMakeLists.txt" },
		{ "isCMake" : true, "isExternal" : true, "path" : "/usr/share/cmake-3.25/Modules/CMakeDetermineSystem.cmake" },
		{ "isGenerated" : true, "path" : "/tmp/fxb/CMakeFiles/3.25.1/CMakeSystem.cmake" },
		{ "isGenerated" : true, "path" : "/tmp/fxb/CMakeFiles/3.25.1/CMakeCXXCompiler.cmake" }
	],
	"kind" : "cmakeFiles",
	"paths" : { "build" : "/tmp/fxb", "source" : "/tmp/fx" },
	"version" : { "major" : 1, "minor" : 0 }
}"#;

    #[test]
    fn cmake_files_1_0() {
        expect![[r#"
            CmakeFiles {
                source: "/tmp/fx",
                build: "/tmp/fxb",
                inputs: [
                    Input {
                        path: "/tmp/fx/CMakeLists.txt",
                        is_generated: false,
                        is_external: false,
                        is_cmake: false,
                    },
                    Input {
                        path: "/usr/share/cmake-3.25/Modules/CMakeDetermineSystem.cmake",
                        is_generated: false,
                        is_external: true,
                        is_cmake: true,
                    },
                    Input {
                        path: "/tmp/fxb/CMakeFiles/3.25.1/CMakeSystem.cmake",
                        is_generated: true,
                        is_external: false,
                        is_cmake: false,
                    },
                    Input {
                        path: "/tmp/fxb/CMakeFiles/3.25.1/CMakeCXXCompiler.cmake",
                        is_generated: true,
                        is_external: false,
                        is_cmake: false,
                    },
                ],
                globs: None,
            }"#]]
        .assert_eq(&format!("{:#?}", parse_cmake_files(CMAKE_FILES_1_0).unwrap()));
    }

    /// A `cmakeFiles` 1.1 reply in the layout CMake 3.28 documents (`globsDependent`).
    #[test]
    fn cmake_files_1_1_with_globs() {
        let reply = r#"{
	"kind": "cmakeFiles", "version": { "major": 1, "minor": 1 },
	"paths": { "source": "/p", "build": "/p/build" },
	"inputs": [ { "path": "CMakeLists.txt" }, { "path": "cmake/Sources.cmake" } ],
	"globsDependent": [
		{ "expression": "/p/src/*.cpp", "recurse": true, "listDirectories": false, "paths": [ "/p/src/a.cpp" ] },
		{ "expression": "/p/include/fixture/*.hpp", "paths": [] }
	]
}"#;
        let files = parse_cmake_files(reply).unwrap();
        expect![[r#"
            Some(
                [
                    GlobDependent {
                        expression: "/p/src/*.cpp",
                        recurse: true,
                    },
                    GlobDependent {
                        expression: "/p/include/fixture/*.hpp",
                        recurse: false,
                    },
                ],
            )"#]]
        .assert_eq(&format!("{:#?}", files.globs));
        let no_globs = r#"{"kind": "cmakeFiles", "version": {"major": 1, "minor": 1}, "paths": {"source": "/p", "build": "/b"}, "inputs": []}"#;
        assert_eq!(parse_cmake_files(no_globs).unwrap().globs, Some(Vec::new()));
        let future = r#"{"kind": "cmakeFiles", "version": {"major": 2, "minor": 0}, "paths": {"source": "/p", "build": "/b"}, "inputs": []}"#;
        expect![[r#"the cmakeFiles reply has the unsupported version 2.0"#]]
            .assert_eq(&parse_cmake_files(future).unwrap_err());
    }

    #[test]
    fn generations() {
        let stamp = |name: &str| IndexStamp { name: name.to_owned(), modified: None };
        let a = stamp("index-2026-11-30T10-33-09-0944.json");
        let b = stamp("index-2026-11-30T10-33-10-0001.json");
        assert!(is_new(None, Some(&a)));
        assert!(is_new(Some(&a), Some(&b)));
        assert!(!is_new(Some(&a), Some(&a)));
        assert!(!is_new(Some(&a), None));
    }

    #[test]
    fn queries_and_latest_index_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        write_queries(dir.path()).unwrap();
        write_queries(dir.path()).unwrap();
        let mut names: Vec<String> = std::fs::read_dir(join_all(dir.path(), &QUERY_DIR))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["cache-v2", "cmakeFiles-v1", "codemodel-v2", "toolchains-v1"]);
        assert_eq!(latest_index(dir.path()), None);
        let reply = join_all(dir.path(), &REPLY_DIR);
        std::fs::create_dir_all(&reply).unwrap();
        for name in ["index-2026-01-01T00-00-00-0000.json", "index-2026-01-02T00-00-00-0000.json", "other.json"] {
            std::fs::write(reply.join(name), "{}").unwrap();
        }
        assert_eq!(latest_index(dir.path()).unwrap().name, "index-2026-01-02T00-00-00-0000.json");
        assert!(read_reply(dir.path(), "../x").is_err());
        assert_eq!(read_reply(dir.path(), "other.json").unwrap(), "{}");
    }
}
