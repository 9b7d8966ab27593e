//! `CMakeCache.txt`: the few entries ForgeMCP reads before configuring, building or testing a build
//! directory (which project it belongs to, its generator, its configurations).
//!
//! Architecture invariant: pure; the service reads the file and compares paths.

/// The entries of a cache file that ForgeMCP reads (the `:TYPE` is dropped); every other entry is
/// skipped without being copied (a cache holds hundreds, and a no-op build reads it every time).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cache {
    source_dir: Option<String>,
    generator: Option<String>,
    build_type: Option<String>,
    configuration_types: Option<String>,
}

impl Cache {
    /// Reads `NAME:TYPE=VALUE` lines; comments (`#`, `//`) and other lines are skipped. A name
    /// given twice keeps its last value.
    pub fn parse(text: &str) -> Cache {
        let mut cache = Cache::default();
        for line in text.lines() {
            // Every name read here starts so, quoted (`"A B":STRING=x`) or not.
            let unquoted = line.strip_prefix('"').unwrap_or(line);
            if !unquoted.starts_with("CMAKE_") {
                continue;
            }
            let line = line.trim_end_matches('\r');
            let Some((key, value)) = line.split_once('=') else { continue };
            let name = key.split_once(':').map_or(key, |(name, _)| name).trim_matches('"');
            let slot = match name {
                "CMAKE_HOME_DIRECTORY" => &mut cache.source_dir,
                "CMAKE_GENERATOR" => &mut cache.generator,
                "CMAKE_BUILD_TYPE" => &mut cache.build_type,
                "CMAKE_CONFIGURATION_TYPES" => &mut cache.configuration_types,
                _ => continue,
            };
            *slot = Some(value.to_owned());
        }
        cache
    }

    /// `CMAKE_HOME_DIRECTORY`: the source directory this cache was made for.
    pub fn source_dir(&self) -> Option<&str> {
        self.source_dir.as_deref()
    }

    pub fn generator(&self) -> Option<&str> {
        self.generator.as_deref()
    }

    /// Why this build directory cannot be built or tested in `configuration` (`None`: it can).
    /// Multi-config caches list their configurations in `CMAKE_CONFIGURATION_TYPES`; single-config
    /// caches must have been configured with `CMAKE_BUILD_TYPE = configuration`.
    pub fn configuration_mismatch(&self, configuration: Option<&str>) -> Option<String> {
        let configuration = configuration?;
        let types: Vec<&str> =
            self.configuration_types.as_deref().unwrap_or_default().split(';').filter(|t| !t.is_empty()).collect();
        if !types.is_empty() {
            return (!types.contains(&configuration)).then(|| {
                format!(
                    "configuration `{configuration}` is not one of the build directory's configurations ({})",
                    types.join(", ")
                )
            });
        }
        let built = self.build_type.as_deref().unwrap_or_default();
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
        CMAKE_HOME_DIRECTORY_NOT:INTERNAL=/elsewhere\n\
        //CMAKE_GENERATOR:INTERNAL=Make\n\
        not an entry\n";

    #[test]
    fn entries() {
        let cache = Cache::parse(CACHE);
        assert_eq!(cache.source_dir(), Some("/tmp/fx"));
        assert_eq!(cache.generator(), Some("Ninja"));
        // A comment or a longer name is not the entry; quoted names keep their quotes out.
        let quoted = Cache::parse("\"CMAKE_CONFIGURATION_TYPES\":STRING=Debug;Release\r\n");
        assert_eq!(quoted.configuration_types.as_deref(), Some("Debug;Release"));
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
