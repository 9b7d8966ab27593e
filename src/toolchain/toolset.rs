//! What discovery produces: toolsets (an id, a name, located tools and, for Visual Studio, the
//! captured developer environment) and their ids.
//!
//! Architecture invariant: ids are pure functions of what identifies a toolset: `system`;
//! `visual-studio-<percent-encoded instanceId>`; `user-<sha256 hex of the name>`. A user toolset
//! keeps its id when its paths change.
//! Architecture invariant: a toolset never changes after discovery; versions are not part of it
//! (they are probed on request, see `version.rs`).

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use sha2::{Digest, Sha256};

use super::spec::ToolSpec;

/// Characters of a Visual Studio instance id kept as they are (RFC 3986 unreserved).
const INSTANCE_ID_KEPT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');

/// The id of the System toolset.
pub const SYSTEM_ID: &str = "system";
/// The name of the System toolset.
pub const SYSTEM_NAME: &str = "System";

/// A toolset id: `system`, `visual-studio-…` or `user-…`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ToolsetId(String);

impl ToolsetId {
    pub fn system() -> ToolsetId {
        ToolsetId(SYSTEM_ID.to_owned())
    }

    /// `visual-studio-<instanceId>`, percent-encoded so any instance id stays one safe word.
    pub fn visual_studio(instance_id: &str) -> ToolsetId {
        ToolsetId(format!("visual-studio-{}", utf8_percent_encode(instance_id, INSTANCE_ID_KEPT)))
    }

    /// `user-<sha256 hex of the name>`: stable for a name whatever its paths are.
    pub fn user(name: &str) -> ToolsetId {
        let digest = Sha256::digest(name.as_bytes());
        let mut hex = String::with_capacity(digest.len() * 2);
        for byte in digest.iter() {
            hex.push(char::from(b"0123456789abcdef"[usize::from(byte >> 4)]));
            hex.push(char::from(b"0123456789abcdef"[usize::from(byte & 0xf)]));
        }
        ToolsetId(format!("user-{hex}"))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ToolsetId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Environment variables, by name as the platform spells them.
pub type Environment = BTreeMap<OsString, OsString>;

/// Looks a variable up by name; case-insensitively on Windows, where names are.
pub fn env_var<'a>(env: &'a Environment, name: &str) -> Option<&'a OsStr> {
    if cfg!(windows) {
        env.iter().find(|(key, _)| key.to_str().is_some_and(|key| key.eq_ignore_ascii_case(name))).map(|(_, v)| &**v)
    } else {
        env.get(OsStr::new(name)).map(OsString::as_os_str)
    }
}

/// One located tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tool {
    pub spec: &'static ToolSpec,
    /// Absolute path of the executable, links not resolved (some tools act by the name they are
    /// started under).
    pub path: PathBuf,
}

impl Tool {
    pub fn name(&self) -> &'static str {
        self.spec.name
    }
}

/// One discovered toolset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Toolset {
    id: ToolsetId,
    name: String,
    /// Sorted by tool name; each built-in tool at most once.
    tools: Vec<Tool>,
    /// The environment the tools must run in; `None` means the server's own environment.
    environment: Option<Arc<Environment>>,
}

impl Toolset {
    /// A toolset; tools are sorted by name, and a repeated tool keeps its first path.
    pub fn new(id: ToolsetId, name: String, tools: Vec<Tool>, environment: Option<Arc<Environment>>) -> Toolset {
        let mut sorted: Vec<Tool> = Vec::with_capacity(tools.len());
        for tool in tools {
            if !sorted.iter().any(|known| known.spec.name == tool.spec.name) {
                sorted.push(tool);
            }
        }
        sorted.sort_by(|a, b| a.spec.name.cmp(b.spec.name));
        Toolset { id, name, tools: sorted, environment }
    }

    pub fn id(&self) -> &ToolsetId {
        &self.id
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Tools sorted by name.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// The tool with this built-in name, when the toolset has it.
    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|tool| tool.spec.name == name)
    }

    /// The environment to run this toolset's tools in (`None`: inherit the server's). Never shown
    /// in results.
    pub fn environment(&self) -> Option<&Arc<Environment>> {
        self.environment.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolchain::spec::lookup;

    #[test]
    fn user_ids_depend_on_the_name_only() {
        assert_eq!(ToolsetId::user("LLVM 20"), ToolsetId::user("LLVM 20"));
        assert_ne!(ToolsetId::user("a"), ToolsetId::user("A"));
        assert_eq!(ToolsetId::user("LLVM 20").as_str().len(), "user-".len() + 64);
    }

    #[test]
    fn known_sha256_vectors() {
        assert_eq!(
            ToolsetId::user("abc").as_str(),
            "user-ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            ToolsetId::user("").as_str(),
            "user-e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn visual_studio_ids_are_percent_encoded() {
        assert_eq!(ToolsetId::visual_studio("2f1e3b4a").as_str(), "visual-studio-2f1e3b4a");
        assert_eq!(ToolsetId::visual_studio("a b/c%d_e.f~g-h").as_str(), "visual-studio-a%20b%2Fc%25d_e.f~g-h");
    }

    #[test]
    fn tools_are_sorted_and_unique() {
        let tool = |name: &str, path: &str| Tool { spec: lookup(name).unwrap(), path: PathBuf::from(path) };
        let toolset = Toolset::new(
            ToolsetId::system(),
            SYSTEM_NAME.to_owned(),
            vec![tool("ninja", "/a/ninja"), tool("cmake", "/a/cmake"), tool("ninja", "/b/ninja")],
            None,
        );
        let names: Vec<_> = toolset.tools().iter().map(|t| (t.name(), t.path.to_str().unwrap())).collect();
        assert_eq!(names, [("cmake", "/a/cmake"), ("ninja", "/a/ninja")]);
        assert_eq!(toolset.tool("ninja").map(|t| t.path.clone()), Some(PathBuf::from("/a/ninja")));
        assert!(toolset.tool("gcc").is_none());
    }

    #[test]
    fn environment_lookup() {
        let mut env = Environment::new();
        env.insert("Path".into(), "C:\\x".into());
        let found = env_var(&env, "PATH");
        assert_eq!(found.is_some(), cfg!(windows));
        assert_eq!(env_var(&env, "Path"), Some(OsStr::new("C:\\x")));
    }
}
