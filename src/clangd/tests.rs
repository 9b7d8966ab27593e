use super::hooks::file_events;
use super::*;
use crate::workspace::observer::{Affected, EntryKind};

fn q(text: &str) -> QualifiedPath {
    QualifiedPath::parse(text).unwrap()
}

fn affected(path: &str, kind: EntryKind) -> Affected {
    Affected { path: q(path), kind }
}

fn events(change: &Mutation) -> Vec<(String, i32)> {
    let roots = Roots::new(PathBuf::from("/w/proj"), PathBuf::from("/w/.proj.forgemcp"));
    file_events(&roots, change)
        .into_iter()
        .map(|event| (event.uri.as_str().to_owned(), serde_json::to_value(event.typ).unwrap().as_i64().unwrap() as i32))
        .collect()
}

#[test]
fn a_move_deletes_every_old_path_and_creates_every_new_one() {
    let change = Mutation {
        kind: MutationKind::Moved { from: q("project/src"), to: q("project/lib") },
        before: vec![affected("project/src", EntryKind::Directory), affected("project/src/a.cpp", EntryKind::File)],
        after: vec![affected("project/lib", EntryKind::Directory), affected("project/lib/a.cpp", EntryKind::File)],
    };
    assert_eq!(
        events(&change),
        [
            ("file:///w/proj/src".to_owned(), 3),
            ("file:///w/proj/src/a.cpp".to_owned(), 3),
            ("file:///w/proj/lib".to_owned(), 1),
            ("file:///w/proj/lib/a.cpp".to_owned(), 1),
        ]
    );
}

#[test]
fn writes_edits_and_deletes() {
    let file = || vec![affected("storage/gen/a.h", EntryKind::File)];
    let edited = Mutation { kind: MutationKind::Edited, before: file(), after: file() };
    assert_eq!(events(&edited), [("file:///w/.proj.forgemcp/gen/a.h".to_owned(), 2)]);
    let created = Mutation { kind: MutationKind::Created, before: vec![], after: file() };
    assert_eq!(events(&created), [("file:///w/.proj.forgemcp/gen/a.h".to_owned(), 1)]);
    let deleted = Mutation { kind: MutationKind::Deleted, before: file(), after: vec![] };
    assert_eq!(events(&deleted), [("file:///w/.proj.forgemcp/gen/a.h".to_owned(), 3)]);
}

fn slot(id: &str) -> Arc<Slot> {
    let spec = ContextSpec {
        id: id.to_owned(),
        toolset_id: "system".to_owned(),
        build_directory: q(&format!("storage/build/{id}")),
        compilation_database: q(&format!("storage/build/{id}/compile_commands.json")),
    };
    let session_spec = SessionSpec {
        context_id: id.to_owned(),
        clangd: PathBuf::from("/usr/bin/clangd"),
        environment: None,
        database_dir: PathBuf::from(format!("/w/.proj.forgemcp/build/{id}")),
        project: PathBuf::from("/w/proj"),
    };
    let state = watch::channel(SlotState { generation: 0, phase: Phase::Starting }).0;
    let database = Arc::default();
    let task = Mutex::new(None);
    Arc::new(Slot { spec, session_spec, database_hash: [0; 32], database, state, task })
}

#[test]
fn selection_defaults_to_all_and_names_unknown_ids() {
    let slots = vec![slot("Debug"), slot("Release")];
    let ids = |selected: Vec<Arc<Slot>>| selected.iter().map(|s| s.spec.id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(select(&slots, &[], Unavailable::default).unwrap()), ["Debug", "Release"]);
    assert_eq!(ids(select(&slots, &["Release".into(), "Release".into()], Unavailable::default).unwrap()), ["Release"]);
    let err = select(&slots, &["Profile".into()], Unavailable::default).err().unwrap();
    assert_eq!(
        err.to_string(),
        "invalid argument `configurations`: unknown configuration `Profile`; available: Debug, Release"
    );
    assert!(matches!(select(&[], &[], Unavailable::default), Err(Error::NoConfiguration(_))));
}

#[test]
fn positions_must_lie_inside_the_file() {
    let file = SourceFile {
        path: q("project/a.cpp"),
        abs: PathBuf::from("/w/proj/a.cpp"),
        uri: convert::file_uri(std::path::Path::new("/w/proj/a.cpp")),
        lines: Arc::new(crate::lsp::LineIndex::new("int x;\n😀\n")),
    };
    let at = |line, character| check_position(&file, Position { line, character });
    assert!(at(1, 0).is_ok());
    assert!(at(1, 6).is_ok());
    assert!(at(2, 1).is_ok());
    assert!(at(3, 0).is_ok(), "the empty line after the final LF");
    let err = at(2, 2).unwrap_err().to_string();
    assert!(err.contains("line 2 has 1 characters"), "{err}");
    assert!(at(4, 0).unwrap_err().to_string().contains("it has 3 lines"));
    assert!(at(0, 0).is_err());
}

#[test]
fn the_service_never_imports_render() {
    // The note text is made in render from the provider's value; the arrow runs one way only.
    fn sources(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                sources(&path, out);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    sources(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/clangd"), &mut files);
    assert!(files.len() > 10, "{files:?}");
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(!text.contains(concat!("crate::", "render")), "{} imports render", file.display());
    }
}
