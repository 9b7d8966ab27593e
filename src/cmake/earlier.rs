//! Build directories from an earlier session: a profile's build directory that holds a
//! `compile_commands.json` on disk while no context of this server lifetime confirms it (a new
//! server on the same storage). Only a configure confirms a context; this list lets clangd and
//! `cmake_build` name the directory and the call that confirms it.
//!
//! Architecture invariant: reads only the existence of each database (and the preset files for a
//! preset's `binaryDir`); never confirms a context.

use super::CmakeService;
use super::preset_files::PresetFiles;
use super::profile::{DefinitionKind, Presets};
use crate::workspace::path::QualifiedPath;

impl CmakeService {
    /// `(profile, configure preset, build directory)` of every profile's known build directory
    /// that has a compilation database on disk and no context of this lifetime (active or
    /// withdrawn), in profile order. A preset profile's directory is the one its operator named, or
    /// else each configure preset's `binaryDir` from the preset files (the automatic `presets`
    /// profile: every visible configure preset; explicit lists: theirs), when only the source
    /// macros are in it.
    pub fn earlier_builds(&self) -> Vec<(String, Option<String>, QualifiedPath)> {
        let roots = self.roots();
        let mut files = None;
        let mut res = Vec::new();
        for definition in self.definitions() {
            let candidates: Vec<(Option<String>, QualifiedPath)> = match definition.kind {
                DefinitionKind::Plain(plain) => vec![(None, plain.build_directory)],
                DefinitionKind::Presets(Presets { build_directory: Some(dir), .. }) => vec![(None, dir)],
                kind => {
                    let files = files.get_or_insert_with(|| PresetFiles::read(roots.project()));
                    let names = match kind {
                        DefinitionKind::Presets(presets) => presets.lists.configure,
                        _ => files.configure_presets(),
                    };
                    names
                        .into_iter()
                        .filter_map(|name| {
                            let dir = files.qualified_binary_dir(&name, roots)?;
                            Some((Some(name), dir))
                        })
                        .collect()
                }
            };
            for (preset, dir) in candidates {
                let unconfirmed = self.tracker.id_for_build_dir(&dir).is_none();
                let on_disk = roots.lexical(&dir).is_some_and(|abs| abs.join("compile_commands.json").is_file());
                if unconfirmed && on_disk {
                    res.push((definition.name.clone(), preset, dir));
                }
            }
        }
        res
    }
}
