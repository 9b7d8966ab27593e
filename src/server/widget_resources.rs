//! The MCP App widget resources `ui://forgemcp/<file>.html`: listed in `resources/list` and read
//! with `resources/read`.
//!
//! Architecture invariant: every widget is listed and readable with MIME exactly
//! `text/html;profile=mcp-app`, the same `_meta.ui` on the list entry and on the content item, and
//! exactly one `text` content item (hosts reject anything else). The HTML comes from
//! `widgets::Widget::html`, which falls back to the missing-assets page; this module knows nothing
//! about what a widget shows.

use rmcp::model::ResourceContents;

use crate::call::Call;
use crate::server::resources::{ResourceSpec, Resources};
use crate::widgets::{Icon, WIDGET_MIME_TYPE, Widget};

pub fn register(resources: &mut Resources) {
    for widget in Widget::ALL {
        let (name, title, icon) = describe(widget);
        let spec = ResourceSpec {
            uri: widget.uri(),
            name,
            title,
            description: "MCP App view of one tool result (self-contained HTML, no network access).",
            mime_type: WIDGET_MIME_TYPE,
            icon,
        };
        resources.add_static_with_meta(
            spec,
            Some(Widget::resource_meta()),
            move |uri: String, _call: Call| async move {
                let content = ResourceContents::TextResourceContents {
                    uri,
                    mime_type: Some(WIDGET_MIME_TYPE.into()),
                    text: widget.html().into_owned(),
                    meta: Some(Widget::resource_meta()),
                };
                Ok(vec![content])
            },
        );
    }
}

/// Resource name (distinct from the text-mirror templates such as `workspace-file`), title, icon.
fn describe(widget: Widget) -> (&'static str, &'static str, Icon) {
    match widget {
        Widget::WorkspaceTree => ("workspace-tree-widget", "Workspace tree widget", Icon::Workspace),
        Widget::WorkspaceFile => ("workspace-file-widget", "Workspace file widget", Icon::WorkspaceFile),
        Widget::WorkspaceSearch => ("workspace-search-widget", "Workspace search widget", Icon::WorkspaceSearch),
        Widget::WorkspaceResult => ("workspace-result-widget", "Workspace result widget", Icon::WorkspaceEdit),
        Widget::ProcessOverview => ("process-overview-widget", "Process overview widget", Icon::Process),
        Widget::ProcessDetails => ("process-details-widget", "Process details widget", Icon::Process),
        Widget::Toolsets => ("toolsets-widget", "Toolsets widget", Icon::Toolchain),
        Widget::CmakeProfiles => ("cmake-profiles-widget", "CMake profiles widget", Icon::Cmake),
        Widget::CmakeConfigure => ("cmake-configure-widget", "CMake configure widget", Icon::Cmake),
        Widget::CmakeBuild => ("cmake-build-widget", "CMake build widget", Icon::Cmake),
        Widget::CmakeTest => ("cmake-test-widget", "CMake test widget", Icon::Cmake),
        Widget::CmakeRunTest => ("cmake-run-test-widget", "CMake run-test widget", Icon::Cmake),
        Widget::CmakeTargets => ("cmake-targets-widget", "CMake targets widget", Icon::Cmake),
        Widget::ClangdResult => ("clangd-result-widget", "Clangd result widget", Icon::Clangd),
        Widget::Debug => ("debug-widget", "Debug widget", Icon::Process),
        Widget::QualityTidy => ("quality-tidy-widget", "clang-tidy widget", Icon::Clangd),
        Widget::QualityFormat => ("quality-format-widget", "clang-format widget", Icon::WorkspaceEdit),
        Widget::WorkspaceHistory => ("workspace-history-widget", "Change history widget", Icon::WorkspaceEdit),
        Widget::WorkspaceRevert => ("workspace-revert-widget", "Revert widget", Icon::WorkspaceEdit),
    }
}
