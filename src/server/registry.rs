//! The tool registry: one place that gives every tool its schemas, annotations, icon and widget,
//! decodes arguments, and turns outcomes into MCP results.
//!
//! Architecture invariant: every successful result is one plain-English text item (followed only by
//! the `resource_link` items a tool adds for documents its text could not hold, such as
//! `quality_format`'s per-file diffs) plus a `structuredContent` object produced by serializing the
//! type its `outputSchema` was derived from (or, for a tree too large to hold twice, built as JSON
//! in that type's exact shape, tested so).

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, OnceLock};

use rmcp::ErrorData;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, MetaObject, Resource, Tool, ToolAnnotations};
use rmcp::schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::call::{BoxFuture, Call, Question};
use crate::widgets::{Icon, Widget};

/// Static description of one tool.
pub struct ToolSpec {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub annotations: Annotations,
    pub widget: Widget,
    pub icon: Icon,
}

/// The annotation sets of INTERFACE.md §1.4.
#[derive(Debug, Clone, Copy)]
pub enum Annotations {
    FsRead,
    FsWrite,
    FsMkdir,
    Inspect,
    CmakeList,
    Exec,
    Analysis,
}

impl Annotations {
    fn to_rmcp(self, title: &str) -> ToolAnnotations {
        let base = ToolAnnotations::with_title(title);
        match self {
            Annotations::FsRead => base.read_only(true).destructive(false).open_world(false),
            Annotations::FsWrite => base.read_only(false).destructive(true).open_world(false),
            Annotations::FsMkdir => base.read_only(false).destructive(false).idempotent(true).open_world(false),
            Annotations::Inspect => base.read_only(true).destructive(false).idempotent(true).open_world(false),
            Annotations::CmakeList => base.read_only(true),
            Annotations::Exec => base.read_only(false).destructive(true).idempotent(false).open_world(true),
            Annotations::Analysis => base.read_only(true).destructive(false),
        }
    }
}

/// What a tool body returns on success: the text for `content` and the typed value.
pub struct ToolOutput<R> {
    text: String,
    value: Structured<R>,
    /// `resource_link` content items after the text.
    links: Vec<Resource>,
}

enum Structured<R> {
    Typed(R),
    /// Serialized by the tool itself, for results of so many objects that a `Value` of them would
    /// cost far more than their JSON text (see [`super::raw_json`]); it must equal the
    /// serialization of an `R` (each such tool tests this).
    Json(Value),
}

impl<R> ToolOutput<R> {
    pub fn new(text: impl Into<String>, value: R) -> ToolOutput<R> {
        ToolOutput { text: text.into(), value: Structured::Typed(value), links: Vec::new() }
    }

    /// A result whose structured value the tool serialized itself, shaped as `R`.
    pub fn json(text: impl Into<String>, value: Value) -> ToolOutput<R> {
        ToolOutput { text: text.into(), value: Structured::Json(value), links: Vec::new() }
    }

    /// Adds `resource_link` content items after the text (documents a text-only client can read).
    pub fn with_links(mut self, links: Vec<Resource>) -> ToolOutput<R> {
        self.links = links;
        self
    }
}

impl<R: Serialize> Structured<R> {
    fn into_json(self) -> serde_json::Result<Value> {
        match self {
            Structured::Typed(value) => serde_json::to_value(&value),
            Structured::Json(value) => Ok(value),
        }
    }
}

/// How a tool body fails.
#[derive(Debug)]
pub enum ToolError {
    /// A failure the model can act on: `isError: true` with this sentence.
    User(String),
    /// The client must answer a question and retry (2026-07-28 sessions).
    InputRequired(Question),
    /// A malformed request: a JSON-RPC error.
    Protocol(ErrorData),
}

impl ToolError {
    /// A user-facing failure from any error, rendered with its source chain.
    pub fn user(err: &(dyn std::error::Error + 'static)) -> ToolError {
        ToolError::User(error_chain(err))
    }
}

/// Renders an error and its sources as one sentence.
pub fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let text = crate::text::error_chain(err);
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => {
            let mut res: String = first.to_uppercase().collect();
            res.push_str(chars.as_str());
            if !res.ends_with('.') {
                res.push('.');
            }
            res
        }
        None => "Unknown error.".to_owned(),
    }
}

/// The raw outcome of one invocation, before the MCP envelope.
pub enum Outcome {
    Success { text: String, structured: Value, links: Vec<Resource> },
    Failure(String),
    InputRequired(Question),
    Protocol(ErrorData),
}

impl Outcome {
    /// The `CallToolResult` for a completed call (`None` for the other outcomes); the text and
    /// the structured value move into it.
    pub fn into_result(self) -> Option<CallToolResult> {
        match self {
            Outcome::Success { text, structured, links } => {
                let content =
                    std::iter::once(ContentBlock::text(text)).chain(links.into_iter().map(ContentBlock::resource_link));
                let mut res = CallToolResult::success(content.collect());
                res.structured_content = Some(structured);
                Some(res)
            }
            Outcome::Failure(text) => Some(CallToolResult::error(vec![ContentBlock::text(text)])),
            Outcome::InputRequired(_) | Outcome::Protocol(_) => None,
        }
    }
}

type Handler = Arc<dyn Fn(Arc<JsonObject>, Call) -> BoxFuture<'static, Outcome> + Send + Sync>;

struct Entry {
    /// Built on first use: deriving and rewriting the schemas is most of the server's start-up
    /// work, and the `initialize` reply does not need them.
    tool: OnceLock<Tool>,
    describe: Box<dyn Fn() -> Tool + Send + Sync>,
    handler: Handler,
}

impl Entry {
    fn tool(&self) -> &Tool {
        self.tool.get_or_init(&self.describe)
    }
}

/// Every tool of the server, by name.
#[derive(Default)]
pub struct Registry {
    tools: BTreeMap<&'static str, Entry>,
}

impl Registry {
    /// Registers a tool whose arguments decode into `A` and whose result serializes from `R`.
    pub fn add<A, R, F, Fut>(&mut self, spec: ToolSpec, body: F)
    where
        A: DeserializeOwned + JsonSchema + 'static,
        R: Serialize + JsonSchema + 'static,
        F: Fn(A, Call) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolOutput<R>, ToolError>> + Send + 'static,
    {
        let name = spec.name;
        let describe = Box::new(move || describe::<A, R>(&spec));
        let body = Arc::new(body);
        let handler: Handler = Arc::new(move |args: Arc<JsonObject>, call: Call| {
            let body = body.clone();
            Box::pin(async move {
                let args: A = match decode_arguments(&args) {
                    Ok(args) => args,
                    Err(message) => return Outcome::Failure(message),
                };
                match body(args, call).await {
                    Ok(output) => match output.value.into_json() {
                        Ok(structured) => Outcome::Success { text: output.text, structured, links: output.links },
                        Err(err) => {
                            Outcome::Protocol(ErrorData::internal_error(format!("serialize result: {err}"), None))
                        }
                    },
                    Err(ToolError::User(message)) => Outcome::Failure(message),
                    Err(ToolError::InputRequired(question)) => Outcome::InputRequired(question),
                    Err(ToolError::Protocol(err)) => Outcome::Protocol(err),
                }
            })
        });
        let previous = self.tools.insert(name, Entry { tool: OnceLock::new(), describe, handler });
        assert!(previous.is_none(), "tool {name} registered twice");
    }

    /// All tools, sorted by name.
    pub fn list(&self) -> Vec<Tool> {
        self.tools.values().map(|entry| entry.tool().clone()).collect()
    }

    pub fn get(&self, name: &str) -> Option<Tool> {
        self.tools.get(name).map(|entry| entry.tool().clone())
    }

    pub fn contains(&self, name: &str) -> bool {
        self.tools.contains_key(name)
    }

    /// Builds every tool's description now (on a spare thread at start-up, so that the first
    /// `tools/list` finds them ready).
    pub fn prepare(&self) {
        for entry in self.tools.values() {
            entry.tool();
        }
    }

    /// Runs a tool; `None` when no tool has that name.
    /// Runs a tool; its arguments are decoded from the shared object, which is never copied.
    pub fn invoke(&self, name: &str, args: Arc<JsonObject>, call: Call) -> Option<BoxFuture<'static, Outcome>> {
        self.tools.get(name).map(|entry| (entry.handler)(args, call))
    }
}

/// The MCP description of a tool: its schemas (derived from `A` and `R`), annotations, icon and
/// widget.
fn describe<A: JsonSchema + 'static, R: JsonSchema + 'static>(spec: &ToolSpec) -> Tool {
    let input_schema = Arc::new(super::schema::input_schema(&derived_schema::<A>(spec.name, Side::Input)));
    let mut meta = MetaObject::new();
    meta.insert("ui".into(), json!({ "resourceUri": spec.widget.uri() }));
    meta.insert("ui/resourceUri".into(), json!(spec.widget.uri()));
    Tool::new(spec.name, spec.description, input_schema)
        .with_title(spec.title)
        .with_raw_output_schema(Arc::new(super::schema::output_schema(&derived_schema::<R>(spec.name, Side::Output))))
        .with_annotations(spec.annotations.to_rmcp(spec.title))
        .with_icons(vec![spec.icon.to_rmcp()])
        .with_meta(meta)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Input,
    Output,
}

/// The schema schemars derives for `T`, as rmcp's `schema_for_input`/`schema_for_output` make it
/// (JSON Schema 2020-12, outputs as serialized, no top-level `title` or `description`, inputs of
/// root type `object`), without their per-thread caches: those keep two more copies of every
/// schema for the life of the process, and each tool's schemas are derived once anyway.
fn derived_schema<T: JsonSchema>(tool: &str, side: Side) -> JsonObject {
    let settings = match side {
        Side::Input => SchemaSettings::draft2020_12(),
        Side::Output => SchemaSettings::draft2020_12().for_serialize(),
    };
    let schema = settings.into_generator().into_root_schema_for::<T>();
    let Ok(Value::Object(mut schema)) = serde_json::to_value(schema) else {
        panic!("the schema of {tool} is not a JSON object");
    };
    if side == Side::Input {
        assert_eq!(schema.get("type"), Some(&json!("object")), "the input schema of {tool} must be an object");
    }
    schema.remove("title");
    schema.remove("description");
    schema
}

/// Decodes tool arguments, naming the offending argument in the error.
fn decode_arguments<A: DeserializeOwned>(args: &JsonObject) -> Result<A, String> {
    serde_path_to_error::deserialize(args).map_err(|err| {
        let path = err.path().to_string();
        let inner = without_type_names(&err.into_inner().to_string());
        if path == "." || path.is_empty() {
            format!("Invalid arguments: {inner}.")
        } else {
            format!("Invalid argument `{path}`: {inner}.")
        }
    })
}

/// A serde message with the Rust type names it may carry replaced by what the schema calls them
/// (`expected struct ProcessTimeoutArg` → `expected an object`; an untagged enum that matched
/// nothing → none of the schema's forms).
fn without_type_names(message: &str) -> String {
    if message.starts_with("data did not match any variant of untagged enum") {
        return "it matches none of the forms the input schema allows".to_owned();
    }
    let mut res = message.to_owned();
    for (kind, plain) in [("struct ", "an object"), ("enum ", "one of the values the input schema lists")] {
        let marker = format!("expected {kind}");
        if let Some(at) = res.find(&marker) {
            let name_start = at + marker.len();
            let name_len =
                res[name_start..].find(|c: char| !c.is_alphanumeric() && c != '_').unwrap_or(res.len() - name_start);
            res.replace_range(at..name_start + name_len, &format!("expected {plain}"));
        }
    }
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Args {
        path: String,
        depth: Option<u32>,
    }

    /// A result with a description, which outputs leave out at the top level.
    #[derive(serde::Serialize, JsonSchema)]
    #[allow(dead_code)]
    struct Out {
        /// How many.
        count: u32,
        children: Option<Vec<String>>,
    }

    #[test]
    fn derived_schemas_are_rmcps_without_its_caches() {
        use rmcp::handler::server::common::{schema_for_input, schema_for_output};
        assert_eq!(derived_schema::<Args>("t", Side::Input), *schema_for_input::<Args>().unwrap());
        assert_eq!(derived_schema::<Out>("t", Side::Output), *schema_for_output::<Out>());
    }

    #[test]
    fn argument_errors_name_the_argument() {
        let args = json!({ "path": "x", "depth": "deep" }).as_object().cloned().unwrap();
        let err = decode_arguments::<Args>(&args).err().unwrap();
        assert!(err.starts_with("Invalid argument `depth`: invalid type: string \"deep\""), "{err}");
        let err = decode_arguments::<Args>(&JsonObject::new()).err().unwrap();
        assert_eq!(err, "Invalid arguments: missing field `path`.");
        let args = json!({ "path": "x", "dpeth": 1 }).as_object().cloned().unwrap();
        let err = decode_arguments::<Args>(&args).err().unwrap();
        assert!(err.contains("unknown field `dpeth`"), "{err}");
        assert_eq!(
            without_type_names("invalid type: integer `120`, expected struct ProcessTimeoutArg"),
            "invalid type: integer `120`, expected an object"
        );
        assert_eq!(
            without_type_names("data did not match any variant of untagged enum ProcessTimeoutArg"),
            "it matches none of the forms the input schema allows"
        );
        assert_eq!(
            without_type_names("invalid type: string \"x\", expected enum Mode"),
            "invalid type: string \"x\", expected one of the values the input schema lists"
        );
    }

    #[test]
    fn error_chain_is_one_sentence() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        #[derive(Debug, thiserror::Error)]
        #[error("failed to read `project/a`")]
        struct Outer(#[source] std::io::Error);
        assert_eq!(error_chain(&Outer(io)), "Failed to read `project/a`: no such file.");
    }
}
