//! The resource registry: static resources, URI templates with their readers, and completion of
//! template arguments.
//!
//! Architecture invariant: `resources/read` tries static URIs first, then templates in
//! registration order; a URI with a template's shape but bad parameters is `-32602`, a URI that
//! names nothing is `-32002`.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{MetaObject, Resource, ResourceContents, ResourceTemplate};
use serde_json::json;

use crate::call::{BoxFuture, Call};
use crate::server::uri_template::{UriTemplate, Variables};
use crate::widgets::Icon;

/// At most this many completion values are returned (MCP limit).
pub const MAX_COMPLETIONS: usize = 100;

/// Why a read failed, before it becomes a JSON-RPC error.
#[derive(Debug)]
pub enum ReadError {
    /// Nothing has this URI (`-32002`).
    NotFound(String),
    /// The URI's parameters are invalid (`-32602`).
    InvalidParams(String),
}

impl ReadError {
    pub fn into_error_data(self, uri: &str) -> ErrorData {
        match self {
            ReadError::NotFound(message) => ErrorData::resource_not_found(message, Some(json!({ "uri": uri }))),
            ReadError::InvalidParams(message) => ErrorData::invalid_params(message, Some(json!({ "uri": uri }))),
        }
    }
}

pub type ReadResult = Result<Vec<ResourceContents>, ReadError>;
type StaticReader = Arc<dyn Fn(String, Call) -> BoxFuture<'static, ReadResult> + Send + Sync>;
type TemplateReader = Arc<dyn Fn(String, Variables, Call) -> BoxFuture<'static, ReadResult> + Send + Sync>;
/// Completes `argument` typed so far as `value`, given the other arguments already filled in.
pub type Completer = Arc<dyn Fn(&str, &str, &HashMap<String, String>) -> Vec<String> + Send + Sync>;
/// Like [`Completer`], for candidates that are known only after waiting (toolset discovery).
pub type AsyncCompleter =
    Arc<dyn Fn(String, String, HashMap<String, String>) -> BoxFuture<'static, Vec<String>> + Send + Sync>;

/// Where a template's completion candidates come from.
enum Candidates {
    Now(Completer),
    Later(AsyncCompleter),
}

/// Static description of a resource or template.
pub struct ResourceSpec {
    pub uri: &'static str,
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub mime_type: &'static str,
    pub icon: Icon,
}

struct StaticEntry {
    spec: ResourceSpec,
    /// `_meta` of the list entry (the widgets' `_meta.ui`).
    meta: Option<MetaObject>,
    reader: StaticReader,
}

struct TemplateEntry {
    spec: ResourceSpec,
    template: UriTemplate,
    reader: TemplateReader,
    completer: Option<Candidates>,
}

#[derive(Default)]
pub struct Resources {
    statics: Vec<StaticEntry>,
    templates: Vec<TemplateEntry>,
}

/// A completion answer before the MCP envelope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    pub values: Vec<String>,
    pub total: usize,
    pub has_more: bool,
}

impl Completion {
    /// Filters `candidates` by `prefix`, keeps their order, and caps the list.
    pub fn from_candidates(candidates: impl IntoIterator<Item = String>, prefix: &str) -> Completion {
        let all: Vec<String> = candidates.into_iter().filter(|c| c.starts_with(prefix)).collect();
        let total = all.len();
        let values: Vec<String> = all.into_iter().take(MAX_COMPLETIONS).collect();
        Completion { has_more: total > values.len(), values, total }
    }

    pub fn empty() -> Completion {
        Completion { values: Vec::new(), total: 0, has_more: false }
    }
}

impl Resources {
    pub fn add_static<F, Fut>(&mut self, spec: ResourceSpec, reader: F)
    where
        F: Fn(String, Call) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ReadResult> + Send + 'static,
    {
        self.add_static_with_meta(spec, None, reader);
    }

    /// Like `add_static`, with `_meta` on the `resources/list` entry.
    pub fn add_static_with_meta<F, Fut>(&mut self, spec: ResourceSpec, meta: Option<MetaObject>, reader: F)
    where
        F: Fn(String, Call) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ReadResult> + Send + 'static,
    {
        let reader: StaticReader = Arc::new(move |uri, call| Box::pin(reader(uri, call)));
        self.statics.push(StaticEntry { spec, meta, reader });
    }

    pub fn add_template<F, Fut>(&mut self, spec: ResourceSpec, reader: F, completer: Option<Completer>)
    where
        F: Fn(String, Variables, Call) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ReadResult> + Send + 'static,
    {
        self.push_template(spec, reader, completer.map(Candidates::Now));
    }

    /// Like [`add_template`](Self::add_template), for completions that have to wait for their
    /// candidates.
    pub fn add_template_awaiting<F, Fut>(&mut self, spec: ResourceSpec, reader: F, completer: AsyncCompleter)
    where
        F: Fn(String, Variables, Call) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ReadResult> + Send + 'static,
    {
        self.push_template(spec, reader, Some(Candidates::Later(completer)));
    }

    fn push_template<F, Fut>(&mut self, spec: ResourceSpec, reader: F, completer: Option<Candidates>)
    where
        F: Fn(String, Variables, Call) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ReadResult> + Send + 'static,
    {
        let template = UriTemplate::new(spec.uri);
        let reader: TemplateReader = Arc::new(move |uri, vars, call| Box::pin(reader(uri, vars, call)));
        self.templates.push(TemplateEntry { spec, template, reader, completer });
    }

    pub fn list(&self) -> Vec<Resource> {
        self.statics
            .iter()
            .map(|entry| {
                let spec = &entry.spec;
                let resource = Resource::new(spec.uri, spec.name)
                    .with_title(spec.title)
                    .with_description(spec.description)
                    .with_mime_type(spec.mime_type)
                    .with_icons(vec![spec.icon.to_rmcp()]);
                match &entry.meta {
                    Some(meta) => resource.with_meta(meta.clone()),
                    None => resource,
                }
            })
            .collect()
    }

    pub fn list_templates(&self) -> Vec<ResourceTemplate> {
        self.templates
            .iter()
            .map(|entry| {
                let spec = &entry.spec;
                ResourceTemplate::new(spec.uri, spec.name)
                    .with_title(spec.title)
                    .with_description(spec.description)
                    .with_mime_type(spec.mime_type)
                    .with_icons(vec![spec.icon.to_rmcp()])
            })
            .collect()
    }

    /// Starts reading `uri`; the future owns everything it needs.
    pub fn read(&self, uri: &str, call: Call) -> BoxFuture<'static, ReadResult> {
        if let Some(entry) = self.statics.iter().find(|e| e.spec.uri == uri) {
            return (entry.reader)(uri.to_owned(), call);
        }
        for entry in &self.templates {
            match entry.template.matches(uri) {
                Ok(Some(vars)) => return (entry.reader)(uri.to_owned(), vars, call),
                Ok(None) => {}
                Err(err) => {
                    let message = format!("invalid resource URI `{uri}`: {err}");
                    return Box::pin(async move { Err(ReadError::InvalidParams(message)) });
                }
            }
        }
        let message = format!("no resource has the URI `{uri}`");
        Box::pin(async move { Err(ReadError::NotFound(message)) })
    }

    /// Completes an argument of the template whose URI template string is `template`.
    pub async fn complete(
        &self,
        template: &str,
        argument: &str,
        value: &str,
        context: &HashMap<String, String>,
    ) -> Result<Completion, ErrorData> {
        let Some(entry) = self.templates.iter().find(|e| e.template.as_str() == template) else {
            return Err(ErrorData::invalid_params(format!("no resource template `{template}`"), None));
        };
        if !entry.template.variable_names().contains(&argument) {
            return Err(ErrorData::invalid_params(
                format!("resource template `{template}` has no argument `{argument}`"),
                None,
            ));
        }
        Ok(match &entry.completer {
            Some(Candidates::Now(completer)) => Completion::from_candidates(completer(argument, value, context), value),
            Some(Candidates::Later(completer)) => {
                let candidates = completer(argument.to_owned(), value.to_owned(), context.clone()).await;
                Completion::from_candidates(candidates, value)
            }
            None => Completion::empty(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completion_caps_at_one_hundred_and_counts_all() {
        let c = Completion::from_candidates((0..250).map(|i| format!("{i:03}")), "");
        assert_eq!((c.values.len(), c.total, c.has_more), (100, 250, true));
        let c = Completion::from_candidates((0..250).map(|i| format!("{i:03}")), "1");
        assert_eq!((c.values.len(), c.total, c.has_more), (100, 100, false));
        assert_eq!(c.values[0], "100");
    }
}
