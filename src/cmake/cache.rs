//! `CMakeCache.txt`: the few entries ForgeMCP reads before configuring, building or testing a build
//! directory (which project it belongs to, its generator, its configurations).
//!
//! Architecture invariant: pure; the service reads the file and compares paths.

use std::collections::BTreeMap;

/// The entries of a cache file, `NAME` → value (the `:TYPE` is dropped).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cache {
    entries: BTreeMap<String, String>,
}

impl Cache {
    /// Reads `NAME:TYPE=VALUE` lines; comments (`#`, `//`) and other lines are skipped.
    pub fn parse(text: &str) -> Cache {
        let mut entries = BTreeMap::new();
        for line in text.lines() {
            let line = line.trim_end_matches('\r');
            if line.starts_with('#') || line.starts_with("//") {
                continue;
            }
            let Some((key, value)) = line.split_once('=') else { continue };
            let name = key.split_once(':').map_or(key, |(name, _)| name);
            // Quoted names (`"A B":STRING=x`) keep their quotes out.
            let name = name.trim_matches('"');
            if !name.is_empty() {
                entries.insert(name.to_owned(), value.to_owned());
            }
        }
        Cache { entries }
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.entries.get(name).map(String::as_str)
    }

    /// `CMAKE_HOME_DIRECTORY`: the source directory this cache was made for.
    pub fn source_dir(&self) -> Option<&str> {
        self.get("CMAKE_HOME_DIRECTORY")
    }

    pub fn generator(&self) -> Option<&str> {
        self.get("CMAKE_GENERATOR")
    }

    /// Why this build directory cannot be built or tested in `configuration` (`None`: it can).
    /// Multi-config caches list their configurations in `CMAKE_CONFIGURATION_TYPES`; single-config
    /// caches must have been configured with `CMAKE_BUILD_TYPE = configuration`.
    pub fn configuration_mismatch(&self, configuration: Option<&str>) -> Option<String> {
        let configuration = configuration?;
        let types: Vec<&str> =
            self.get("CMAKE_CONFIGURATION_TYPES").unwrap_or_default().split(';').filter(|t| !t.is_empty()).collect();
        if !types.is_empty() {
            return (!types.contains(&configuration)).then(|| {
                format!(
                    "configuration `{configuration}` is not one of the build directory's configurations ({})",
                    types.join(", ")
                )
            });
        }
        let built = self.get("CMAKE_BUILD_TYPE").unwrap_or_default();
        (built != configuration).then(|| {
            let built = if built.is_empty() { "no build type".to_owned() } else { format!("`{built}`") };
            format!("the build directory was configured for {built}, not `{configuration}`; run cmake_configure first")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CACHE: &str = "# This is the CMakeCache file.\n\
        //Choose the type of build\n\
        CMAKE_BUILD_TYPE:STRING=Debug\n\
        CMAKE_GENERATOR:INTERNAL=Ninja\n\
        CMAKE_HOME_DIRECTORY:INTERNAL=/tmp/fx\n\
        \"WEIRD NAME\":STRING=a=b\r\n\
        not an entry\n";

    #[test]
    fn entries() {
        let cache = Cache::parse(CACHE);
        assert_eq!(cache.source_dir(), Some("/tmp/fx"));
        assert_eq!(cache.generator(), Some("Ninja"));
        assert_eq!(cache.get("WEIRD NAME"), Some("a=b"));
        assert_eq!(cache.get("not an entry"), None);
    }

    #[test]
    fn single_config_must_match_the_build_type() {
        let cache = Cache::parse(CACHE);
        assert_eq!(cache.configuration_mismatch(Some("Debug")), None);
        assert_eq!(cache.configuration_mismatch(None), None);
        assert_eq!(
            cache.configuration_mismatch(Some("Release")).unwrap(),
            "the build directory was configured for `Debug`, not `Release`; run cmake_configure first"
        );
        assert_eq!(
            Cache::parse("").configuration_mismatch(Some("Release")).unwrap(),
            "the build directory was configured for no build type, not `Release`; run cmake_configure first"
        );
    }

    #[test]
    fn multi_config_must_list_the_configuration() {
        let cache = Cache::parse("CMAKE_CONFIGURATION_TYPES:STRING=Debug;Release;RelWithDebInfo\n");
        assert_eq!(cache.configuration_mismatch(Some("Release")), None);
        assert_eq!(
            cache.configuration_mismatch(Some("Profile")).unwrap(),
            "configuration `Profile` is not one of the build directory's configurations (Debug, Release, RelWithDebInfo)"
        );
    }
}
