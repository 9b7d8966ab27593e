//! `workspace_text_search` and the `forgemcp://workspace/search{…}` resource: arguments, result
//! shape, the skipped-files result document, and completions.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use rmcp::model::ResourceContents;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::call::Call;
use crate::render;
use crate::server::registry::{Annotations, Registry, ToolError, ToolOutput, ToolSpec};
use crate::server::resources::{Completer, ReadError, ResourceSpec, Resources};
use crate::server::uri_template::Variables;
use crate::server::workspace_tools::{ResourceLinks, links, path_argument, path_completer, read_error};
use crate::widgets::{Icon, Widget};
use crate::workspace::path::{LinkPolicy, QualifiedPath};
use crate::workspace::results::Document;
use crate::workspace::search::SearchOptions;
use crate::workspace::text_search::{FilesPage, TextSearch};
use crate::workspace::{Error, WorkspaceService};

fn default_path() -> String {
    "project/".to_owned()
}
fn default_true() -> bool {
    true
}
fn default_max_matches() -> u64 {
    100
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceTextSearchArgs {
    /// Text to find (a Rust regex when `regex`).
    pub query: String,
    /// File or directory to search.
    #[serde(default = "default_path")]
    pub path: String,
    /// `query` is a regular expression.
    #[serde(default)]
    pub regex: bool,
    /// Extensions to search (case-insensitive); null = all files, `[""]` = files without one.
    #[serde(default)]
    pub extensions: Option<Vec<String>>,
    /// Match case exactly.
    #[serde(default = "default_true")]
    pub case_sensitive: bool,
    /// Most lines (or files, with `files_only`) returned; all are counted.
    #[serde(default = "default_max_matches")]
    #[schemars(range(min = 1))]
    pub max_matches: u64,
    /// Matching lines (or files) to pass over first, to page through the results.
    #[serde(default)]
    pub offset: u64,
    /// Globs to leave out: without `/` a file or directory name (`googletest*`), with `/` a path
    /// relative to `path` (`test/vendor/**`).
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Return the matching files with their counts instead of lines.
    #[serde(default)]
    pub files_only: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchMatchOut {
    /// The file.
    pub path: String,
    /// 1-based line number.
    pub line: u64,
    /// The line without its terminator; for a line longer than 400 characters, 200 characters
    /// around its first match.
    pub text: String,
    /// Every match in `text` as `[start, end)` in zero-based Unicode code points.
    pub spans: Vec<[usize; 2]>,
    /// Characters of the whole line, when `text` is a window of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line_length: Option<u64>,
    /// Zero-based character column of the line where `text` starts, when it is a window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text_column: Option<u64>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchCountOut {
    /// A file (`files`) or a directory ending in `/` (`directories`).
    pub path: String,
    /// Matching lines in it.
    pub matches: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct WorkspaceTextSearchResult {
    /// At most `max_matches` matching lines, sorted by path and line.
    pub matches: Vec<SearchMatchOut>,
    /// Exact number of matching lines in the whole scan.
    pub matches_count: u64,
    /// True when more lines matched than were returned.
    pub matches_truncated: bool,
    /// Matching lines (or files) passed over before the returned ones.
    pub offset: u64,
    /// With `files_only`: at most `max_matches` files with matching lines and their counts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files: Option<Vec<SearchCountOut>>,
    /// Number of files with matching lines.
    pub files_count: u64,
    /// Matching lines per directory below `path` (the shallowest level that splits them).
    pub directories: Vec<SearchCountOut>,
    /// Files skipped as binary or not UTF-8.
    pub skipped_files_count: u64,
    /// `skipped_files` links the complete list of skipped files when there are any.
    pub resources: ResourceLinks,
    /// `ready` (answered with the search index), `building`, or `scanning (reason)`; the answer is
    /// the same either way.
    pub index: String,
}

struct Request {
    path: QualifiedPath,
    options: SearchOptions,
    files_only: Option<FilesPage>,
}

/// Bytes of matching-line text one result carries at most (the text and the structured result each
/// hold it once, so a result stays near 80 KB however large `max_matches` is).
const TEXT_BUDGET: usize = 30_000;

fn to_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

fn validate(ws: &WorkspaceService, args: WorkspaceTextSearchArgs) -> Result<Request, ToolError> {
    if args.query.is_empty() {
        return Err(ToolError::User("Invalid argument `query`: it must not be empty.".into()));
    }
    if args.max_matches < 1 {
        return Err(ToolError::User("Invalid argument `max_matches`: it must be at least 1.".into()));
    }
    let path = path_argument(ws, "path", &args.path)?;
    if !path.is_managed() {
        return Err(ToolError::User(format!(
            "Invalid argument `path`: `{path}` is outside the workspace; only project/ and storage/ can be searched."
        )));
    }
    let (max_matches, offset) = (to_usize(args.max_matches), to_usize(args.offset));
    let options = SearchOptions {
        query: args.query,
        regex: args.regex,
        case_sensitive: args.case_sensitive,
        extensions: args.extensions,
        // Files-only keeps no lines beyond one (the counts are always complete).
        max_matches: if args.files_only { 1 } else { max_matches },
        offset: if args.files_only { 0 } else { offset },
        exclude: args.exclude,
        excluded_dirs: ws.excluded_dirs().to_vec(),
    };
    let files_only = args.files_only.then_some(FilesPage { offset, limit: max_matches });
    Ok(Request { path, options, files_only })
}

/// Runs the search and stores the skipped-files document when there is one.
async fn run(
    ws: Arc<WorkspaceService>,
    request: Request,
    call: Call,
) -> Result<(TextSearch, SearchOptions, ResourceLinks), Error> {
    let Request { path, options, files_only } = request;
    let joined = tokio::task::spawn_blocking(move || {
        let mut result = ws.search_text(&path, &options, &call)?;
        result.keep_within(TEXT_BUDGET);
        if let Some(page) = files_only {
            result.matches.clear();
            result.offset = page.offset as u64;
            result.files_page = Some(page);
        }
        let mut documents = Vec::new();
        if !result.skipped_files.is_empty() {
            let list: Vec<String> = result.skipped_files.iter().map(ToString::to_string).collect();
            documents.push(Document::json("skipped_files", &json!({ "skipped_files": list })));
        }
        let resources = links(ws.results().store(documents));
        Ok((result, options, resources))
    })
    .await;
    joined.unwrap_or_else(|join| {
        Err(Error::Io {
            path: QualifiedPath::area_root(crate::workspace::path::Area::Project),
            source: std::io::Error::other(join.to_string()),
        })
    })
}

fn to_result(result: &TextSearch, groups: Vec<(String, u64)>, resources: ResourceLinks) -> WorkspaceTextSearchResult {
    let count = |(path, matches): (&QualifiedPath, u64)| SearchCountOut { path: path.to_string(), matches };
    let directory = |(path, matches): (String, u64)| SearchCountOut { path, matches };
    WorkspaceTextSearchResult {
        matches: result
            .matches
            .iter()
            .map(|m| SearchMatchOut {
                path: m.path.to_string(),
                line: m.line,
                text: m.text.clone(),
                spans: m.spans.clone(),
                line_length: m.clip.map(|clip| clip.line_chars as u64),
                text_column: m.clip.map(|clip| clip.from as u64),
            })
            .collect(),
        matches_count: result.matches_count,
        matches_truncated: result.truncated(),
        offset: result.offset,
        files: result.files_page.map(|_| result.listed_files().map(|(p, n)| count((p, n))).collect()),
        files_count: result.file_counts.len() as u64,
        directories: groups.into_iter().map(directory).collect(),
        skipped_files_count: result.skipped_files.len() as u64,
        resources,
        index: result.index.to_string(),
    }
}

pub fn register(registry: &mut Registry, resources: &mut Resources, workspace: &Arc<WorkspaceService>) {
    let ws = workspace.clone();
    registry.add(
        ToolSpec {
            name: "workspace_text_search",
            title: "Search text",
            description: "Find lines matching text or a regex in a file or tree (skips dot-directories, links, binary \
                          and non-UTF-8 files, `exclude` globs and the server's excluded directories). Returns up to \
                          `max_matches` lines from `offset` (or files with counts, `files_only`); counts all, per \
                          directory too.",
            annotations: Annotations::FsRead,
            widget: Widget::WorkspaceSearch,
            icon: Icon::WorkspaceSearch,
        },
        move |args: WorkspaceTextSearchArgs, call: Call| {
            let ws = ws.clone();
            async move {
                let request = validate(&ws, args)?;
                let (result, options, resources) = run(ws, request, call).await.map_err(|e| ToolError::user(&e))?;
                let groups = render::search::by_directory(&result);
                let text = render::search::text(&result, &options, &groups);
                Ok(ToolOutput::new(text, to_result(&result, groups, resources)))
            }
        },
    );
    let ws = workspace.clone();
    resources.add_template(
        ResourceSpec {
            uri: "forgemcp://workspace/search{?query,path,regex,extensions,case_sensitive,max_matches}",
            name: "workspace-search",
            title: "Workspace text search",
            description: "Search results as Markdown, e.g. forgemcp://workspace/search?path=project/&query=TODO&extensions=cpp,hpp. \
                          Percent-encode values (%20 for a space; + is a literal plus); extensions are comma-separated and \
                          an empty value means files without an extension.",
            mime_type: "text/markdown",
            icon: Icon::WorkspaceSearch,
        },
        move |uri: String, vars: Variables, call: Call| {
            let ws = ws.clone();
            async move {
                let args = search_args(&vars)?;
                let request = validate(&ws, args).map_err(|e| match e {
                    ToolError::User(message) => ReadError::InvalidParams(message),
                    other => ReadError::InvalidParams(format!("{other:?}")),
                })?;
                let (result, _options, resources) = run(ws, request, call).await.map_err(read_error)?;
                let skipped = resources.get("skipped_files").map(|l| l.uri.as_str());
                let text = render::search::markdown(&result, skipped);
                Ok(vec![ResourceContents::text(text, uri).with_mime_type("text/markdown")])
            }
        },
        Some(search_completer(workspace)),
    );
}

fn parse_bool(vars: &Variables, name: &str, default: bool) -> Result<bool, ReadError> {
    match vars.get(name) {
        None => Ok(default),
        Some("true") => Ok(true),
        Some("false") => Ok(false),
        Some(other) => {
            Err(ReadError::InvalidParams(format!("parameter `{name}` must be `true` or `false`, not `{other}`")))
        }
    }
}

fn search_args(vars: &Variables) -> Result<WorkspaceTextSearchArgs, ReadError> {
    let query = vars.get("query").ok_or_else(|| ReadError::InvalidParams("parameter `query` is required".into()))?;
    let max_matches = match vars.get("max_matches") {
        None => default_max_matches(),
        Some(raw) => raw.parse::<u64>().ok().filter(|n| *n >= 1).ok_or_else(|| {
            ReadError::InvalidParams(format!("parameter `max_matches` must be a positive integer, not `{raw}`"))
        })?,
    };
    Ok(WorkspaceTextSearchArgs {
        query: query.to_owned(),
        path: vars.get("path").map_or_else(default_path, str::to_owned),
        regex: parse_bool(vars, "regex", false)?,
        extensions: vars.get("extensions").map(|raw| raw.split(',').map(str::to_owned).collect()),
        case_sensitive: parse_bool(vars, "case_sensitive", true)?,
        max_matches,
        offset: 0,
        exclude: Vec::new(),
        files_only: false,
    })
}

fn search_completer(workspace: &Arc<WorkspaceService>) -> Completer {
    let ws = workspace.clone();
    let paths = path_completer(workspace, false);
    Arc::new(move |argument: &str, value: &str, context: &HashMap<String, String>| match argument {
        "path" => paths(argument, value, context),
        "regex" | "case_sensitive" => vec!["false".to_owned(), "true".to_owned()],
        "extensions" => complete_extensions(&ws, value, context.get("path").map_or("project/", String::as_str)),
        _ => Vec::new(),
    })
}

/// At most this many files are inspected to suggest extensions.
const EXTENSION_SCAN_LIMIT: usize = 20_000;

/// Completes the segment after the last comma with extensions present under `path`, keeping the
/// earlier segments.
fn complete_extensions(ws: &WorkspaceService, value: &str, path: &str) -> Vec<String> {
    let (done, _) = value.rsplit_once(',').map_or(("", value), |(done, last)| (done, last));
    let prefix = if done.is_empty() { String::new() } else { format!("{done},") };
    let Ok(start) = QualifiedPath::parse(path) else { return Vec::new() };
    if !start.is_managed() {
        return Vec::new();
    }
    let Ok(resolved) = ws.roots().resolve_existing(&start, LinkPolicy::Refuse) else { return Vec::new() };
    let mut found = BTreeSet::new();
    let walker = ignore::WalkBuilder::new(&resolved.abs)
        .standard_filters(false)
        .follow_links(false)
        .filter_entry(|entry| {
            entry.depth() == 0
                || !entry.file_name().to_string_lossy().starts_with('.')
                || !entry.file_type().is_some_and(|t| t.is_dir())
        })
        .build();
    for entry in walker.flatten().filter(|e| e.file_type().is_some_and(|t| t.is_file())).take(EXTENSION_SCAN_LIMIT) {
        let name = entry.file_name().to_string_lossy();
        if let Some((stem, ext)) = name.rsplit_once('.')
            && !stem.is_empty()
            && !ext.is_empty()
        {
            found.insert(ext.to_ascii_lowercase());
        }
    }
    let already: BTreeSet<&str> = done.split(',').collect();
    found.into_iter().filter(|ext| !already.contains(ext.as_str())).map(|ext| format!("{prefix}{ext}")).collect()
}
