// The panel's side of the Hub's JSON API and event stream (INTERFACE.md §16.5). Every API request
// carries the session's CSRF value, embedded in the page by the Hub; the event stream, which
// EventSource opens without custom headers, takes it as a query parameter.

const meta = (name: string) => document.querySelector<HTMLMetaElement>(`meta[name="${name}"]`)?.content ?? "";

export const csrf = meta("forgemcp-csrf");
export const sandboxOrigin = meta("forgemcp-sandbox");

export interface Instance {
  instance_id: string;
  pid: number;
  version: string;
  workspace: string;
  storage: string;
  started_at: string;
  reconnects: number;
  order: number;
  state: "connected" | "reconnecting";
  /** The MCP client's name and version, once it initialized. */
  client?: string | null;
}

export interface Progress {
  at: string;
  progress: number;
  total: number | null;
  message: string;
}

export interface ContentBlock {
  type: string;
  text?: string;
  [key: string]: unknown;
}

export interface CallResult {
  content?: ContentBlock[];
  structuredContent?: unknown;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

export interface Call {
  call_id: number;
  origin: "client" | "panel";
  tool: string;
  arguments: Record<string, unknown>;
  started_at: string;
  finished_at: string | null;
  state: "running" | "completed" | "tool_error" | "protocol_error" | "cancelled" | "input_required";
  progress: Progress[];
  progress_dropped: number;
  result: CallResult | null;
  error: { code: number; message: string; data?: unknown } | null;
}

export interface Elicitation {
  elicitation_id: string;
  message: string;
  requested_schema: { properties?: Record<string, { type?: string; description?: string; title?: string }>; required?: string[] };
  requested_at: string;
}

export interface Tool {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: unknown;
  outputSchema?: unknown;
  annotations?: Record<string, unknown>;
  _meta?: { ui?: { resourceUri?: string }; "ui/resourceUri"?: string; [key: string]: unknown };
}

export interface Resource {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  _meta?: { ui?: Record<string, unknown> };
}

export interface Template {
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
}

export interface Catalog {
  tools: Tool[];
  resources: Resource[];
  resource_templates: Template[];
}

export interface ResourceContents {
  uri: string;
  mimeType?: string;
  text?: string;
  blob?: string;
  _meta?: { ui?: Record<string, unknown> };
}

/** An API failure: the HTTP status and the Hub's message. */
export class ApiError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

async function call<T>(method: "GET" | "POST", path: string, body?: unknown): Promise<T> {
  const response = await fetch(path, {
    method,
    headers: { "X-ForgeMCP-CSRF": csrf, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "same-origin",
    cache: "no-store",
  });
  const text = await response.text();
  let value: unknown = null;
  try {
    value = text ? JSON.parse(text) : null;
  } catch {
    value = { error: text };
  }
  if (!response.ok) {
    const message = (value as { error?: string } | null)?.error ?? `HTTP ${response.status}`;
    throw new ApiError(response.status, message);
  }
  return value as T;
}

const instancePath = (iid: string) => `/api/instances/${encodeURIComponent(iid)}`;

export const api = {
  instances: () => call<{ instances: Instance[] }>("GET", "/api/instances"),
  history: (iid: string) => call<{ calls: Call[] }>("GET", `${instancePath(iid)}/history`),
  catalog: (iid: string) => call<Catalog>("GET", `${instancePath(iid)}/catalog`),
  status: (iid: string) => call<Record<string, unknown>>("GET", `${instancePath(iid)}/status`),
  readResource: (iid: string, uri: string) =>
    call<{ contents: ResourceContents[] }>("POST", `${instancePath(iid)}/resources/read`, { uri }),
  startCall: (iid: string, tool: string, args: Record<string, unknown>) =>
    call<{ call_id: number }>("POST", `${instancePath(iid)}/calls`, { tool, arguments: args }),
  cancelCall: (iid: string, callId: number) => call<object>("POST", `${instancePath(iid)}/calls/${callId}/cancel`),
  answer: (iid: string, eid: string, action: "accept" | "decline" | "cancel", content?: Record<string, unknown>) =>
    call<object>("POST", `${instancePath(iid)}/elicitations/${encodeURIComponent(eid)}`, { action, content }),
};

export const eventsUrl = () => `/api/events?csrf=${encodeURIComponent(csrf)}`;
