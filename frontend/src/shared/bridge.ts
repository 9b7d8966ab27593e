// The view side of MCP Apps (JSON-RPC 2.0 over postMessage with the host), hand-written instead of
// the SDK's App class to keep every widget small. Handlers are installed at module load, before
// `ui/initialize`, because hosts may send the tool input and result right after `initialized`.

export const PROTOCOL_VERSION = "2026-01-26";

export interface HostContext {
  theme?: "light" | "dark";
  styles?: { variables?: Record<string, string>; css?: { fonts?: string } };
  displayMode?: string;
  containerDimensions?: { height?: number; maxHeight?: number; width?: number; maxWidth?: number };
  [key: string]: unknown;
}

export interface ContentBlock {
  type: string;
  text?: string;
}

/** A standard MCP `CallToolResult`. */
export interface ToolResult {
  content?: ContentBlock[];
  structuredContent?: unknown;
  isError?: boolean;
}

export interface ResourceContents {
  uri: string;
  mimeType?: string;
  text?: string;
  blob?: string;
}

export type ViewEvent =
  | { kind: "input"; arguments: Record<string, unknown> }
  | { kind: "result"; result: ToolResult }
  | { kind: "cancelled"; reason?: string }
  | { kind: "context"; context: HostContext };

interface Message {
  jsonrpc: "2.0";
  id?: number | string;
  method?: string;
  params?: Record<string, unknown>;
  result?: unknown;
  error?: { code: number; message: string };
}

const pending = new Map<number | string, { ok: (value: unknown) => void; fail: (error: Error) => void }>();
let nextId = 0;
let listener: (event: ViewEvent) => void = () => {};
let hostCapabilities: Record<string, unknown> = {};
export let hostContext: HostContext = {};

const post = (message: Message) => window.parent.postMessage(message, "*");

function notify(event: ViewEvent) {
  listener(event);
}

addEventListener("message", (event: MessageEvent) => {
  const m = event.data as Message;
  if (event.source !== window.parent || m?.jsonrpc !== "2.0") return;
  if (m.method === undefined) {
    if (m.id === undefined) return;
    const waiter = pending.get(m.id);
    pending.delete(m.id);
    if (m.error) waiter?.fail(new Error(m.error.message));
    else waiter?.ok(m.result);
    return;
  }
  const params = m.params ?? {};
  if (m.id !== undefined) {
    // Requests from the host: teardown and ping answer `{}`; everything else is unknown.
    if (m.method === "ui/resource-teardown" || m.method === "ping") post({ jsonrpc: "2.0", id: m.id, result: {} });
    else post({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: `unsupported method ${m.method}` } });
    return;
  }
  switch (m.method) {
    case "ui/notifications/tool-input":
      return notify({ kind: "input", arguments: (params.arguments ?? {}) as Record<string, unknown> });
    case "ui/notifications/tool-result":
      return notify({ kind: "result", result: params as ToolResult });
    case "ui/notifications/tool-cancelled":
      return notify({ kind: "cancelled", reason: params.reason as string | undefined });
    case "ui/notifications/host-context-changed":
      hostContext = { ...hostContext, ...(params as HostContext) };
      applyContext(hostContext);
      return notify({ kind: "context", context: hostContext });
  }
});

export function request<T = unknown>(method: string, params: object = {}): Promise<T> {
  const id = ++nextId;
  return new Promise<T>((ok, fail) => {
    pending.set(id, { ok: ok as (value: unknown) => void, fail });
    post({ jsonrpc: "2.0", id, method, params: params as Record<string, unknown> });
  });
}

/** Theme, host style variables and the height policy, from the host context. */
function applyContext(context: HostContext) {
  const root = document.documentElement;
  if (context.theme) {
    root.dataset.theme = context.theme;
    root.style.colorScheme = context.theme;
  }
  for (const [name, value] of Object.entries(context.styles?.variables ?? {})) {
    if (name.startsWith("--") && value) root.style.setProperty(name, value);
  }
  const fill = context.containerDimensions?.height !== undefined || (context.displayMode ?? "inline") !== "inline";
  root.classList.toggle("fill", fill);
}

/** Reports the document size whenever it changes (rAF-debounced). */
function watchSize() {
  let last = "";
  let queued = false;
  const report = () => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      const height = Math.ceil(document.documentElement.getBoundingClientRect().height);
      const width = Math.ceil(innerWidth);
      if (`${width}x${height}` === last) return;
      last = `${width}x${height}`;
      post({ jsonrpc: "2.0", method: "ui/notifications/size-changed", params: { width, height } });
    });
  };
  const observer = new ResizeObserver(report);
  observer.observe(document.documentElement);
  observer.observe(document.body);
  report();
}

/** Starts the handshake; `onEvent` receives the tool input, result, cancellation and context. */
export async function connect(name: string, onEvent: (event: ViewEvent) => void) {
  listener = onEvent;
  const init = await request<{ hostCapabilities?: Record<string, unknown>; hostContext?: HostContext }>(
    "ui/initialize",
    {
      appInfo: { name: `forgemcp-${name}`, version: "0.3.0" },
      appCapabilities: { availableDisplayModes: ["inline"] },
      protocolVersion: PROTOCOL_VERSION,
    },
  );
  hostCapabilities = init?.hostCapabilities ?? {};
  hostContext = init?.hostContext ?? {};
  applyContext(hostContext);
  notify({ kind: "context", context: hostContext });
  post({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} });
  watchSize();
}

const RESULT_PREFIX = "forgemcp://workspace/results/";

/** Reads one of the result's own immutable result resources through the host. */
export async function readResource(uri: string): Promise<ResourceContents> {
  if (!uri.startsWith(RESULT_PREFIX)) throw new Error(`not a result resource: ${uri}`);
  if (!hostCapabilities.serverResources) throw new Error("this host does not offer resource reads");
  const result = await request<{ contents?: ResourceContents[] }>("resources/read", { uri });
  const item = result?.contents?.[0];
  if (!item || typeof item.text !== "string") throw new Error(`no text content in ${uri}`);
  return item;
}
