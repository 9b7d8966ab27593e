// The official SDK host (AppBridge from @modelcontextprotocol/ext-apps) around the same sandbox
// proxy: proves our hand-written view glue interoperates with the reference implementation.
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

const query = new URLSearchParams(location.search);
const widget = query.get("widget");
const theme = (query.get("theme") ?? "light") as "light" | "dark";
const sandboxOrigin = query.get("sandbox")!;
const [html, fixture] = await Promise.all([
  fetch(`/assets/${widget}.html`).then((r) => r.text()),
  fetch(`/fixtures/${query.get("fixture")}.json`).then((r) => r.json()),
]);
const events: string[] = [];
(window as unknown as { __events: string[] }).__events = events;

const outer = document.createElement("iframe");
outer.id = "outer";
outer.setAttribute("sandbox", "allow-scripts allow-same-origin");
outer.setAttribute("allow", "clipboard-write");
outer.style.height = "420px";
document.body.append(outer);

const bridge = new AppBridge(
  null,
  { name: "sdk-test-host", version: "0" },
  { serverResources: {} },
  { hostContext: { theme, displayMode: "inline", availableDisplayModes: ["inline"] } },
);
bridge.onsandboxready = () => {
  events.push("sandbox-ready");
  void bridge.sendSandboxResourceReady({ html, permissions: { clipboardWrite: {} } });
};
bridge.oninitialized = () => {
  events.push("initialized");
  void bridge.sendToolInput({ arguments: fixture.arguments });
  void bridge.sendToolResult(fixture.result);
};
bridge.onsizechange = ({ height }) => {
  events.push(`size:${height}`);
  if (height) outer.style.height = `${height}px`;
};
bridge.onreadresource = async ({ uri }) => {
  events.push(`read:${uri}`);
  const read = fixture.resources?.[uri];
  if (!read) throw new Error(`no resource has the URI ${uri}`);
  return read;
};
(window as unknown as { __setTheme: (t: "light" | "dark") => void }).__setTheme = (t) => bridge.setHostContext({ theme: t });
(window as unknown as { __teardown: () => Promise<unknown> }).__teardown = () => bridge.teardownResource({});
// Connect first (the WindowProxy survives navigation), then load the proxy, so its ready
// notification cannot be missed.
await bridge.connect(new PostMessageTransport(outer.contentWindow!, outer.contentWindow!));
events.push("connected");
outer.src = `${sandboxOrigin}/sandbox.html`;
