//! The MCP App widgets and icons shipped inside the binary.
//!
//! Architecture invariant: every tool names exactly one widget (`_meta.ui.resourceUri`) and one
//! icon; icons are embedded SVG files served as data URIs.
//! Architecture invariant: widget HTML is build output of `frontend/` under `assets/`, embedded by
//! `build.rs` with `include_bytes!`; a widget whose file was missing at build time is served as an
//! explicit missing-assets page, so an unbuilt checkout still builds and runs.

use std::borrow::Cow;

use base64::Engine;
use rmcp::model::{Icon as RmcpIcon, MetaObject};
use serde_json::json;

include!(concat!(env!("OUT_DIR"), "/embedded_assets.rs"));

/// The MIME type of every MCP App widget resource (compared literally by hosts).
pub const WIDGET_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The widget HTML files, one per tool family (INTERFACE.md §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Widget {
    WorkspaceTree,
    WorkspaceFile,
    WorkspaceSearch,
    WorkspaceResult,
    ProcessOverview,
    ProcessDetails,
    Toolsets,
    CmakeProfiles,
    CmakeConfigure,
    CmakeBuild,
    CmakeTest,
    CmakeRunTest,
    CmakeTargets,
    ClangdResult,
    Debug,
    QualityTidy,
    QualityFormat,
    WorkspaceHistory,
    WorkspaceRevert,
}

impl Widget {
    pub const ALL: [Widget; 19] = [
        Widget::WorkspaceTree,
        Widget::WorkspaceFile,
        Widget::WorkspaceSearch,
        Widget::WorkspaceResult,
        Widget::ProcessOverview,
        Widget::ProcessDetails,
        Widget::Toolsets,
        Widget::CmakeProfiles,
        Widget::CmakeConfigure,
        Widget::CmakeBuild,
        Widget::CmakeTest,
        Widget::CmakeRunTest,
        Widget::CmakeTargets,
        Widget::ClangdResult,
        Widget::Debug,
        Widget::QualityTidy,
        Widget::QualityFormat,
        Widget::WorkspaceHistory,
        Widget::WorkspaceRevert,
    ];

    /// The `ui://forgemcp/<file>` resource URI.
    pub fn uri(self) -> &'static str {
        match self {
            Widget::WorkspaceTree => "ui://forgemcp/workspace-tree.html",
            Widget::WorkspaceFile => "ui://forgemcp/workspace-file.html",
            Widget::WorkspaceSearch => "ui://forgemcp/workspace-search.html",
            Widget::WorkspaceResult => "ui://forgemcp/workspace-result.html",
            Widget::ProcessOverview => "ui://forgemcp/process-overview.html",
            Widget::ProcessDetails => "ui://forgemcp/process-details.html",
            Widget::Toolsets => "ui://forgemcp/toolsets.html",
            Widget::CmakeProfiles => "ui://forgemcp/cmake-profiles.html",
            Widget::CmakeConfigure => "ui://forgemcp/cmake-configure.html",
            Widget::CmakeBuild => "ui://forgemcp/cmake-build.html",
            Widget::CmakeTest => "ui://forgemcp/cmake-test.html",
            Widget::CmakeRunTest => "ui://forgemcp/cmake-run-test.html",
            Widget::CmakeTargets => "ui://forgemcp/cmake-targets.html",
            Widget::ClangdResult => "ui://forgemcp/clangd-result.html",
            Widget::Debug => "ui://forgemcp/debug.html",
            Widget::QualityTidy => "ui://forgemcp/quality-tidy.html",
            Widget::QualityFormat => "ui://forgemcp/quality-format.html",
            Widget::WorkspaceHistory => "ui://forgemcp/workspace-history.html",
            Widget::WorkspaceRevert => "ui://forgemcp/workspace-revert.html",
        }
    }

    /// The asset file name, `workspace-tree.html` for `ui://forgemcp/workspace-tree.html`.
    pub fn file_name(self) -> &'static str {
        self.uri().trim_start_matches("ui://forgemcp/")
    }

    /// Whether the built widget was embedded (false in a checkout whose `assets/` lacks the file).
    pub fn is_built(self) -> bool {
        embedded_asset(self.file_name()).is_some()
    }

    /// The widget's HTML document, or the missing-assets page when it was not built.
    pub fn html(self) -> Cow<'static, str> {
        match embedded_asset(self.file_name()) {
            Some(bytes) => String::from_utf8_lossy(bytes),
            None => Cow::Owned(missing_asset_page(self.file_name())),
        }
    }

    /// `_meta.ui` of the widget resource, on the list entry and on the read content item alike:
    /// the host draws a border, and the copy icons may use the clipboard. No CSP domains: widgets
    /// make no network requests, so the host's restrictive default applies.
    pub fn resource_meta() -> MetaObject {
        let mut meta = MetaObject::new();
        meta.insert("ui".into(), json!({ "prefersBorder": true, "permissions": { "clipboardWrite": {} } }));
        meta
    }
}

/// The page served for an asset that was not built into this binary.
pub fn missing_asset_page(file_name: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>ForgeMCP: missing assets</title></head>\n\
         <body style=\"font: 13px/1.4 system-ui, sans-serif; margin: 12px\"><h1 style=\"font-size: 15px\">Missing assets</h1>\n\
         <p>This ForgeMCP binary was built from a source checkout without <code>assets/{file_name}</code>. \
         Build the widgets with <code>npm run build --prefix frontend</code>, then rebuild the server.</p>\n\
         <p>The tool result itself is complete in the text and JSON the client received.</p></body></html>\n"
    )
}

/// The icon set (INTERFACE.md §1.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Icon {
    Workspace,
    WorkspaceFile,
    WorkspaceSearch,
    WorkspaceEdit,
    Process,
    Toolchain,
    Cmake,
    Clangd,
}

impl Icon {
    pub fn svg(self) -> &'static [u8] {
        match self {
            Icon::Workspace => include_bytes!("../assets/icons/workspace.svg"),
            Icon::WorkspaceFile => include_bytes!("../assets/icons/workspace-file.svg"),
            Icon::WorkspaceSearch => include_bytes!("../assets/icons/workspace-search.svg"),
            Icon::WorkspaceEdit => include_bytes!("../assets/icons/workspace-edit.svg"),
            Icon::Process => include_bytes!("../assets/icons/process.svg"),
            Icon::Toolchain => include_bytes!("../assets/icons/toolchain.svg"),
            Icon::Cmake => include_bytes!("../assets/icons/cmake.svg"),
            Icon::Clangd => include_bytes!("../assets/icons/clangd.svg"),
        }
    }

    pub fn data_uri(self) -> String {
        format!("data:image/svg+xml;base64,{}", base64::engine::general_purpose::STANDARD.encode(self.svg()))
    }

    pub fn to_rmcp(self) -> RmcpIcon {
        RmcpIcon::new(self.data_uri()).with_mime_type("image/svg+xml").with_sizes(vec!["any".into()])
    }
}
