//! The MCP App widgets and icons shipped inside the binary.
//!
//! Architecture invariant: every tool names exactly one widget (`_meta.ui.resourceUri`) and one
//! icon; icons are embedded SVG files served as data URIs.

use base64::Engine;
use rmcp::model::Icon as RmcpIcon;

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
    ClangdResult,
}

impl Widget {
    pub fn file_name(self) -> &'static str {
        match self {
            Widget::WorkspaceTree => "workspace-tree.html",
            Widget::WorkspaceFile => "workspace-file.html",
            Widget::WorkspaceSearch => "workspace-search.html",
            Widget::WorkspaceResult => "workspace-result.html",
            Widget::ProcessOverview => "process-overview.html",
            Widget::ProcessDetails => "process-details.html",
            Widget::Toolsets => "toolsets.html",
            Widget::CmakeProfiles => "cmake-profiles.html",
            Widget::CmakeConfigure => "cmake-configure.html",
            Widget::CmakeBuild => "cmake-build.html",
            Widget::CmakeTest => "cmake-test.html",
            Widget::CmakeRunTest => "cmake-run-test.html",
            Widget::ClangdResult => "clangd-result.html",
        }
    }

    /// The `ui://forgemcp/<file>` resource URI.
    pub fn uri(self) -> String {
        format!("ui://forgemcp/{}", self.file_name())
    }
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
