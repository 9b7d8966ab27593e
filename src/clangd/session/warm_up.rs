//! The warm-up of a new session. clangd loads the compilation database, and starts its background
//! index, only when a file is first opened; the database is then loaded on a thread of its own, so
//! the index may report its first work after the opened file's diagnostics.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

use super::{Documents, language_id};
use crate::clangd::convert::file_uri;

/// How long the warm-up parse may take before index-backed requests stop waiting for it.
const WARM_UP_TIMEOUT: Duration = Duration::from_secs(120);
/// How long the warm-up waits, after its diagnostics, for clangd to begin indexing (a `.clangd`
/// may turn the background index off).
const INDEX_START_TIMEOUT: Duration = Duration::from_secs(10);

/// Opens the first file of the compilation database once, so clangd loads the database and starts
/// its background index, then waits until clangd has begun indexing (for at most
/// [`INDEX_START_TIMEOUT`]).
pub(super) async fn warm_up(documents: &Arc<Documents>, database: &Path) {
    let mut worked = documents.state.worked.subscribe();
    if open_first_file(documents, database).await
        && tokio::time::timeout(INDEX_START_TIMEOUT, worked.wait_for(|worked| *worked)).await.is_err()
    {
        tracing::info!("clangd reported no indexing after its warm-up; index-backed requests stop waiting");
    }
}

/// Opens and closes the first readable file of the database; returns whether it opened one.
async fn open_first_file(documents: &Arc<Documents>, database: &Path) -> bool {
    let Some((file, text)) = tokio::task::spawn_blocking({
        let database = database.to_path_buf();
        move || first_database_file(&database)
    })
    .await
    .ok()
    .flatten() else {
        return false;
    };
    let uri = file_uri(&file);
    let deadline = Instant::now() + WARM_UP_TIMEOUT;
    let name = file.display().to_string();
    match documents.open(&uri, name, language_id(&file), &text, deadline).await {
        Ok(mut doc) => {
            if let Err(err) = doc.diagnostics(deadline).await {
                tracing::debug!("clangd warm-up: {err}");
            }
            true
        }
        Err(err) => {
            tracing::debug!("clangd warm-up: {err}");
            false
        }
    }
}

/// The first entry of a compilation database whose file can be read as text.
pub(super) fn first_database_file(database: &Path) -> Option<(PathBuf, String)> {
    let bytes = std::fs::read(database).ok()?;
    let entries: Vec<Value> = serde_json::from_slice(&bytes).ok()?;
    entries.iter().find_map(|entry| {
        let file = Path::new(entry.get("file")?.as_str()?);
        let file = if file.is_absolute() {
            file.to_path_buf()
        } else {
            Path::new(entry.get("directory")?.as_str()?).join(file)
        };
        let text = std::fs::read_to_string(&file).ok()?;
        Some((file, text))
    })
}
