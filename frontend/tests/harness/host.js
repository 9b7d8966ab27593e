// Our minimal MCP Apps host for the browser tests: renders one widget with one recorded fixture
// through the sandbox proxy, records every message, answers resources/read from the fixture.
const query = new URLSearchParams(location.search);
const widget = query.get("widget");
const theme = query.get("theme") ?? "light";
const [html, fixture] = await Promise.all([
  fetch(`/assets/${widget}.html`).then((r) => r.text()),
  fetch(`/fixtures/${query.get("fixture")}.json`).then((r) => r.json()),
]);
const sandboxOrigin = query.get("sandbox");
const log = (window.__log = []);
const outer = document.createElement("iframe");
outer.id = "outer";
outer.setAttribute("sandbox", "allow-scripts allow-same-origin");
outer.setAttribute("allow", "clipboard-write");
outer.style.height = "420px";
outer.src = `${sandboxOrigin}/sandbox.html`;
document.body.append(outer);

const send = (message) => {
  log.push({ dir: "out", ...message });
  outer.contentWindow.postMessage(message, sandboxOrigin);
};
let nextId = 1000;
const waiting = new Map();
window.__request = (method, params = {}) =>
  new Promise((ok) => {
    const id = ++nextId;
    waiting.set(id, ok);
    send({ jsonrpc: "2.0", id, method, params });
  });
window.__setTheme = (value) =>
  send({ jsonrpc: "2.0", method: "ui/notifications/host-context-changed", params: { theme: value } });

let proxyReady = false;
addEventListener("message", (event) => {
  if (event.source !== outer.contentWindow || event.origin !== sandboxOrigin) return;
  const m = event.data;
  log.push({ dir: "in", ...m });
  const answer = (result) => send({ jsonrpc: "2.0", id: m.id, result });
  const fail = (code, message) => send({ jsonrpc: "2.0", id: m.id, error: { code, message } });
  switch (m.method) {
    case "ui/notifications/sandbox-proxy-ready":
      if (proxyReady) return;
      proxyReady = true;
      return send({
        jsonrpc: "2.0",
        method: "ui/notifications/sandbox-resource-ready",
        params: { html, permissions: { clipboardWrite: {} } },
      });
    case "ui/initialize":
      return answer({
        protocolVersion: "2026-01-26",
        hostInfo: { name: "forgemcp-test-host", version: "0" },
        hostCapabilities: query.get("resources") === "no" ? {} : { serverResources: {} },
        hostContext: { theme, displayMode: "inline", availableDisplayModes: ["inline"], platform: "web" },
      });
    case "ui/notifications/initialized":
      send({ jsonrpc: "2.0", method: "ui/notifications/tool-input", params: { arguments: fixture.arguments } });
      return send({ jsonrpc: "2.0", method: "ui/notifications/tool-result", params: fixture.result });
    case "ui/notifications/size-changed":
      if (m.params.height) outer.style.height = `${m.params.height}px`;
      return;
    case "resources/read": {
      const read = fixture.resources?.[m.params.uri];
      return read ? answer(read) : fail(-32002, `no resource has the URI ${m.params.uri}`);
    }
    default:
      if (m.id !== undefined && m.method) return fail(-32601, `unsupported method ${m.method}`);
      if (m.id !== undefined && waiting.has(m.id)) {
        waiting.get(m.id)(m);
        waiting.delete(m.id);
      }
  }
});
