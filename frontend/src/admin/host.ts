// The MCP Apps host role of the admin panel (MCP-APPS.md §5.3): one WidgetHost per rendered
// history entry. The widget runs in sandbox.html on the second loopback port (another origin, strict
// CSP), inside an inner sandbox="allow-scripts" iframe. The host delivers the call's arguments and
// its result, answers resources/read only for the result resources that result links to (read from
// the same instance through the Hub API), and refuses tools/call and every other request.
import type { Call, CallResult, ResourceContents } from "./api";

const PROTOCOL_VERSION = "2026-01-26";
const RESULT_PREFIX = "forgemcp://workspace/results/";
const MIN_HEIGHT = 120;
const MAX_HEIGHT = 1200;

interface Message {
  jsonrpc: "2.0";
  id?: number | string;
  method?: string;
  params?: any;
  result?: unknown;
  error?: { code: number; message: string };
}

export interface WidgetOptions {
  /** The sandbox origin (`http://127.0.0.1:<port>`). */
  sandboxOrigin: string;
  /** The widget document and the `_meta.ui` of its resource. */
  html: string;
  ui: { permissions?: { clipboardWrite?: object } } | undefined;
  toolName: string;
  theme: "light" | "dark";
  /** Reads a resource of the call's instance. */
  read: (uri: string) => Promise<{ contents: ResourceContents[] }>;
  /** Reports view log messages and refused requests (shown in the panel). */
  log: (line: string) => void;
}

/** Every `forgemcp://workspace/results/*` URI mentioned in a result's structured content. */
export function linkedResults(result: CallResult | null): Set<string> {
  const found = new Set<string>();
  const visit = (value: unknown) => {
    if (typeof value === "string") {
      if (value.startsWith(RESULT_PREFIX)) found.add(value);
    } else if (Array.isArray(value)) value.forEach(visit);
    else if (value && typeof value === "object") Object.values(value).forEach(visit);
  };
  visit(result?.structuredContent);
  return found;
}

export class WidgetHost {
  readonly frame: HTMLIFrameElement;
  private proxyReady = false;
  private initialized = false;
  private sentInput = false;
  private sentEnd = false;
  private queue: Message[] = [];
  private nextId = 1;
  private waiting = new Map<number, (m: Message) => void>();
  private call: Call;
  private listener = (event: MessageEvent) => this.onMessage(event);

  constructor(container: HTMLElement, call: Call, private readonly options: WidgetOptions) {
    this.call = call;
    const frame = document.createElement("iframe");
    frame.className = "widget-frame";
    frame.title = `${options.toolName} widget`;
    // The proxy needs its own origin (allow-same-origin) to host the opaque inner frame.
    frame.setAttribute("sandbox", "allow-scripts allow-same-origin");
    if (options.ui?.permissions?.clipboardWrite) frame.setAttribute("allow", "clipboard-write");
    frame.style.height = "420px";
    frame.src = `${options.sandboxOrigin}/sandbox.html?host=${encodeURIComponent(location.hostname)}`;
    this.frame = frame;
    addEventListener("message", this.listener);
    container.replaceChildren(frame);
  }

  /** The history entry changed (progress, result): send the result once it exists. */
  update(call: Call) {
    this.call = call;
    this.flushCall();
  }

  setTheme(theme: "light" | "dark") {
    this.notify("ui/notifications/host-context-changed", { theme });
  }

  /** Tears the view down (waits at most a second for its answer) and removes the frame. */
  async destroy() {
    if (this.initialized) {
      await Promise.race([this.request("ui/resource-teardown", {}), new Promise((ok) => setTimeout(ok, 1000))]);
    }
    removeEventListener("message", this.listener);
    this.frame.remove();
  }

  private post(message: Message) {
    this.frame.contentWindow?.postMessage(message, this.options.sandboxOrigin);
  }

  private send(message: Message) {
    // Nothing reaches the view before it said it is initialized (the proxy messages excepted).
    if (!this.initialized) this.queue.push(message);
    else this.post(message);
  }

  private notify(method: string, params: unknown) {
    this.send({ jsonrpc: "2.0", method, params });
  }

  private request(method: string, params: unknown): Promise<Message> {
    const id = this.nextId++;
    return new Promise((ok) => {
      this.waiting.set(id, ok);
      this.post({ jsonrpc: "2.0", id, method, params });
    });
  }

  private flushCall() {
    if (!this.initialized) return;
    if (!this.sentInput) {
      this.sentInput = true;
      this.notify("ui/notifications/tool-input", { arguments: this.call.arguments });
    }
    if (this.sentEnd) return;
    const { state, result, error } = this.call;
    if (state === "running") return;
    this.sentEnd = true;
    if (result) this.notify("ui/notifications/tool-result", result);
    else if (state === "cancelled") this.notify("ui/notifications/tool-cancelled", { reason: "the call was cancelled" });
    else this.notify("ui/notifications/tool-cancelled", { reason: error?.message ?? `the call ended: ${state}` });
  }

  private onMessage(event: MessageEvent) {
    if (event.source !== this.frame.contentWindow || event.origin !== this.options.sandboxOrigin) return;
    const m = event.data as Message;
    if (!m || m.jsonrpc !== "2.0") return;
    if (m.method === undefined && m.id !== undefined) {
      const waiter = this.waiting.get(m.id as number);
      this.waiting.delete(m.id as number);
      waiter?.(m);
      return;
    }
    const answer = (result: unknown) => this.post({ jsonrpc: "2.0", id: m.id, result });
    const fail = (code: number, message: string) => this.post({ jsonrpc: "2.0", id: m.id, error: { code, message } });
    switch (m.method) {
      case "ui/notifications/sandbox-proxy-ready":
        if (this.proxyReady) return;
        this.proxyReady = true;
        this.post({
          jsonrpc: "2.0",
          method: "ui/notifications/sandbox-resource-ready",
          params: { html: this.options.html, permissions: this.options.ui?.permissions ?? {} },
        });
        return;
      case "ui/initialize":
        return answer({
          protocolVersion: PROTOCOL_VERSION,
          hostInfo: { name: "forgemcp-admin", version: "0.3.0" },
          hostCapabilities: { serverResources: {}, logging: {}, openLinks: {} },
          hostContext: {
            toolInfo: { id: this.call.call_id, tool: { name: this.options.toolName } },
            theme: this.options.theme,
            displayMode: "inline",
            availableDisplayModes: ["inline"],
            containerDimensions: { maxHeight: 640 },
            locale: navigator.language,
            timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
            platform: "web",
            userAgent: navigator.userAgent,
          },
        });
      case "ui/notifications/initialized": {
        this.initialized = true;
        const queued = this.queue;
        this.queue = [];
        queued.forEach((q) => this.post(q));
        this.flushCall();
        return;
      }
      case "ui/notifications/size-changed": {
        const height = Number(m.params?.height);
        if (Number.isFinite(height)) this.frame.style.height = `${Math.min(MAX_HEIGHT, Math.max(MIN_HEIGHT, height))}px`;
        return;
      }
      case "notifications/message":
        this.options.log(`widget: ${JSON.stringify(m.params?.data ?? m.params)}`);
        return;
      case "ping":
        return answer({});
      case "ui/request-display-mode":
        return answer({ mode: "inline" });
      case "ui/open-link": {
        const url = String(m.params?.url ?? "");
        if (!/^https?:\/\//i.test(url)) return fail(-32602, "only http and https links can be opened");
        window.open(url, "_blank", "noopener,noreferrer");
        return answer({});
      }
      case "resources/read": {
        const uri = String(m.params?.uri ?? "");
        if (!linkedResults(this.call.result).has(uri)) {
          this.options.log(`refused a widget read of ${uri}: not linked from this result`);
          return fail(-32002, `the admin panel lets a widget read only the result resources its own result links to`);
        }
        this.options.read(uri).then(
          (result) => answer(result),
          (error: Error) => fail(-32002, error.message),
        );
        return;
      }
      case "tools/call":
        this.options.log(`refused a widget tools/call of ${m.params?.name ?? "?"}`);
        return fail(-32601, "widgets cannot call tools in the admin panel");
      case "ui/notifications/request-teardown":
        return;
      default:
        if (m.id !== undefined && m.method) return fail(-32601, `unsupported method ${m.method}`);
    }
  }
}
