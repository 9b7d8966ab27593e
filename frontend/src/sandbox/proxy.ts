// The widget sandbox proxy (sandbox.html, MCP-APPS.md §5.2), served by the Hub on its second
// loopback port with a strict CSP that only the admin origin may frame. The widget runs in an inner
// iframe with sandbox="allow-scripts" (no same-origin: an opaque origin that can reach neither this
// page, nor the panel, nor the network), loaded through srcdoc. Messages are relayed both ways; the
// sandbox-* notifications stay between the panel and this proxy.

// Replaced by the Hub when it serves the page: the panel's origin, the only one we talk to.
const ADMIN_ORIGIN = "__FORGEMCP_ADMIN_ORIGIN__";
const DEFAULT_SANDBOX = "allow-scripts";

if (window.parent === window) {
  document.body.textContent = "This page only works inside the ForgeMCP admin panel.";
} else {
  const inner = document.createElement("iframe");
  inner.setAttribute("sandbox", DEFAULT_SANDBOX);
  inner.title = "widget";
  document.body.append(inner);
  const isSandboxMessage = (m: any) => typeof m?.method === "string" && m.method.startsWith("ui/notifications/sandbox-");
  addEventListener("message", (event) => {
    const m = event.data;
    if (event.source === window.parent && event.origin === ADMIN_ORIGIN) {
      if (m?.method === "ui/notifications/sandbox-resource-ready") {
        // Only clipboard-write is honoured; the sandbox flags never grow beyond allow-scripts.
        if (m.params?.permissions?.clipboardWrite) inner.setAttribute("allow", "clipboard-write");
        inner.srcdoc = String(m.params?.html ?? "");
      } else if (!isSandboxMessage(m)) {
        inner.contentWindow?.postMessage(m, "*");
      }
    } else if (event.source === inner.contentWindow && event.source !== null && !isSandboxMessage(m)) {
      window.parent.postMessage(m, ADMIN_ORIGIN);
    }
  });
  window.parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {} }, ADMIN_ORIGIN);
}
