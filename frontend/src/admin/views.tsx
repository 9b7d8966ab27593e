// The instance's catalog, resources, status and settings views: tool descriptions rendered (code
// spans, paragraphs), a filter, argument boxes pre-filled from the input schema's required fields;
// status sections shown with the tools' own widgets; settings as readable values.
import type { ComponentChildren } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";

import { JsonView, readableTime } from "../shared/ui";
import { api, type Call, type CallResult, type Catalog, type ResourceContents, type Tool } from "./api";
import { WidgetPane } from "./widget-pane";

export function Block({ title, value, open }: { title: string; value: unknown; open?: boolean }) {
  return (
    <details open={open}>
      <summary>{title}</summary>
      <JsonView value={value} />
    </details>
  );
}

/** `code` spans and blank-line paragraphs of a tool description (the only markup they use). */
export function Described({ text }: { text?: string }) {
  if (!text) return null;
  return (
    <div class="described" data-testid="tool-description">
      {text.split(/\n\s*\n/).map((paragraph) => (
        <p>{paragraph.split(/(`[^`]+`)/).map((part) => (/^`[^`]+`$/.test(part) ? <code>{part.slice(1, -1)}</code> : part))}</p>
      ))}
    </div>
  );
}

/** Text with `process_get(process_id=N)` and `forgemcp://processes/N` references that open the process. */
export function Linked({ text, open }: { text: string; open?: (uri: string) => void }): ComponentChildren {
  if (!open) return text;
  const parts = text.split(/(process_get\(process_id=\d+\)|forgemcp:\/\/processes\/\d+)/);
  return parts.map((part, i) => {
    const id = /(?:process_id=|processes\/)(\d+)/.exec(part)?.[1];
    return i % 2 === 1 && id ? (
      <button class="link mono ref" data-testid="process-ref" title={`Open process ${id}`} onClick={() => open(`forgemcp://processes/${id}`)}>
        {part}
      </button>
    ) : (
      part
    );
  });
}

type Schema = { type?: string | string[]; properties?: Record<string, Schema>; required?: string[]; default?: unknown; enum?: unknown[]; $ref?: string; anyOf?: Schema[]; oneOf?: Schema[] };

/** A placeholder value for one required argument, from its schema. */
function placeholder(schema: Schema | undefined): unknown {
  if (!schema) return "";
  if (schema.default !== undefined) return schema.default;
  if (schema.enum?.length) return schema.enum[0];
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
  switch (type) {
    case "integer":
    case "number":
      return 0;
    case "boolean":
      return false;
    case "array":
      return [];
    case "object":
      return {};
    default:
      return "";
  }
}

/** The argument box's starting text: every required field with a placeholder value. */
export function prefill(tool: Tool): string {
  const schema = (tool.inputSchema ?? {}) as Schema;
  const required = schema.required ?? [];
  if (required.length === 0) return "{}";
  const value = Object.fromEntries(required.map((name) => [name, placeholder(schema.properties?.[name])]));
  return JSON.stringify(value, null, 2);
}

const matchesTool = (tool: Tool, query: string) =>
  !query || [tool.name, tool.title ?? "", tool.description ?? ""].some((text) => text.toLowerCase().includes(query.toLowerCase()));

export function Tools(props: { iid: string; catalog?: Catalog; error?: string; controls: boolean; onStarted: (callId: number) => void }) {
  const { catalog } = props;
  const [name, setName] = useState<string | null>(null);
  const [query, setQuery] = useState("");
  if (props.error) return <div class="err">The tool list is unavailable: {props.error}</div>;
  if (!catalog) return <div class="empty">Loading tools…</div>;
  const shown = catalog.tools.filter((t) => matchesTool(t, query));
  const tool = shown.find((t) => t.name === name) ?? shown[0];
  return (
    <div class="split">
      <div>
        <input class="filter" data-testid="tool-filter" placeholder="Filter tools" value={query} onInput={(e) => setQuery((e.currentTarget as HTMLInputElement).value)} />
        <ul class="calls" data-testid="tools">
          {shown.length === 0 && <li class="empty">No tool matches.</li>}
          {shown.map((t) => (
            <li class={t.name === tool?.name ? "sel" : ""} data-testid="tool" data-tool={t.name} onClick={() => setName(t.name)}>
              <div class="mono name">{t.name}</div>
              <div class="sub">{t.title ?? ""}</div>
            </li>
          ))}
        </ul>
      </div>
      <div class="detail">{tool && <ToolDetail key={tool.name} iid={props.iid} tool={tool} controls={props.controls} onStarted={props.onStarted} />}</div>
    </div>
  );
}

function ToolDetail({ iid, tool, controls, onStarted }: { iid: string; tool: Tool; controls: boolean; onStarted: (id: number) => void }) {
  const [args, setArgs] = useState(() => prefill(tool));
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const run = async () => {
    setError(null);
    let parsed: unknown;
    try {
      parsed = JSON.parse(args);
    } catch (e) {
      return setError(`The arguments are not valid JSON: ${(e as Error).message}`);
    }
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) return setError("The arguments must be a JSON object.");
    setBusy(true);
    try {
      const { call_id } = await api.startCall(iid, tool.name, parsed as Record<string, unknown>);
      onStarted(call_id);
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div data-testid="tool-detail" data-tool={tool.name}>
      <h2 class="mono">{tool.name}</h2>
      {tool.title && <div>{tool.title}</div>}
      <Described text={tool.description} />
      {controls && (
        <div class="card run" data-testid="call-form">
          <label for="call-arguments">Arguments (literal JSON; the required ones are filled in)</label>
          <textarea id="call-arguments" data-testid="call-arguments" rows={5} value={args} onInput={(e) => setArgs((e.currentTarget as HTMLTextAreaElement).value)} />
          <div class="row">
            <button data-testid="call-run" disabled={busy} onClick={run}>
              Call {tool.name}
            </button>
          </div>
          {error && <div class="err" data-testid="call-error">{error}</div>}
        </div>
      )}
      <Block title="Input schema" value={tool.inputSchema} open />
      {tool.outputSchema !== undefined && <Block title="Output schema" value={tool.outputSchema} />}
      {tool.annotations && <Block title="Annotations" value={tool.annotations} />}
      {tool._meta && <Block title="_meta" value={tool._meta} />}
    </div>
  );
}

// ---------------------------------------------------------------------------------------------
// Resources.

export function Resources({ iid, catalog, error, open }: { iid: string; catalog?: Catalog; error?: string; open?: string }) {
  const follow = (target: string) => void read(target);
  const [uri, setUri] = useState(open ?? "");
  const [result, setResult] = useState<{ uri: string; contents?: ResourceContents[]; error?: string } | null>(null);
  const read = async (target: string) => {
    setUri(target);
    setResult({ uri: target });
    try {
      const { contents } = await api.readResource(iid, target);
      setResult({ uri: target, contents });
    } catch (e) {
      setResult({ uri: target, error: (e as Error).message });
    }
  };
  useEffect(() => void (open && read(open)), [open]);
  if (error) return <div class="err">The resource list is unavailable: {error}</div>;
  if (!catalog) return <div class="empty">Loading resources…</div>;
  return (
    <div class="resources">
      <div class="row">
        <input class="grow mono" data-testid="resource-uri" value={uri} placeholder="forgemcp://…" onInput={(e) => setUri((e.currentTarget as HTMLInputElement).value)} />
        <button data-testid="resource-read" onClick={() => read(uri)}>
          Read
        </button>
      </div>
      {result && (
        <div class="card" data-testid="resource-result">
          <div class="mono sub">{result.uri}</div>
          {result.error && <div class="err">{result.error}</div>}
          {!result.error && !result.contents && <div class="empty">Reading…</div>}
          {result.contents?.map((c) => (
            <div>
              <div class="sub">{c.mimeType ?? "no MIME type"}</div>
              {c.text !== undefined ? (
                <pre class="text">
                  <Linked text={c.text} open={follow} />
                </pre>
              ) : <div>{c.blob ? `${Math.floor((c.blob.length * 3) / 4)} bytes of binary content` : "empty"}</div>}
            </div>
          ))}
        </div>
      )}
      <h3>Static resources</h3>
      <ul class="list">
        {catalog.resources.map((r) => (
          <li>
            <button class="link mono" onClick={() => read(r.uri)}>
              {r.uri}
            </button>{" "}
            <span class="sub">
              {r.mimeType} · {r.description ?? r.name}
            </span>
          </li>
        ))}
      </ul>
      <h3>Resource templates</h3>
      <ul class="list">
        {catalog.resource_templates.map((t) => (
          <li>
            <button class="link mono" title="Fill the address field" onClick={() => setUri(t.uriTemplate)}>
              {t.uriTemplate}
            </button>{" "}
            <span class="sub">
              {t.mimeType} · {t.description ?? t.name}
            </span>
          </li>
        ))}
      </ul>
    </div>
  );
}

// ---------------------------------------------------------------------------------------------
// Status and settings (one request: settings come with the status).

interface StatusSection {
  tool: string | null;
  result?: CallResult;
  error?: string;
}

/** A status probe's result as a finished call, so the tool's widget can show it. */
const probeCall = (section: StatusSection, index: number, at: string): Call => ({
  call_id: -(index + 1),
  origin: "panel",
  tool: section.tool ?? "status",
  arguments: {},
  started_at: at,
  finished_at: at,
  state: section.result?.isError ? "tool_error" : "completed",
  progress: [],
  progress_dropped: 0,
  result: section.result ?? null,
  error: null,
});

const widgetOf = (catalog: Catalog | undefined, tool: string | null) => {
  const meta = catalog?.tools.find((t) => t.name === tool)?._meta;
  return meta?.ui?.resourceUri ?? meta?.["ui/resourceUri"];
};

/**
 * Status: one section per read-only status tool the instance offers (processes, toolsets, CMake
 * profiles, clangd configurations, and whatever else the instance lists, such as debug sessions),
 * each shown with that tool's widget, or as text when it has none.
 */
export function StatusView({ iid, part, catalog }: { iid: string; part: "status" | "settings"; catalog?: Catalog }) {
  const [status, setStatus] = useState<any>(null);
  const [loadedAt, setLoadedAt] = useState("");
  const [error, setError] = useState<string | null>(null);
  const load = useMemo(
    () => () => {
      setError(null);
      api.status(iid).then(
        (value) => {
          setLoadedAt(new Date().toISOString());
          setStatus(value);
        },
        (e: Error) => setError(e.message),
      );
    },
    [iid],
  );
  useEffect(load, [load]);
  const refresh = <button onClick={load}>Refresh</button>;
  if (error)
    return (
      <div class="err">
        Status unavailable: {error} {refresh}
      </div>
    );
  if (!status) return <div class="empty">Loading…</div>;
  if (part === "settings") {
    return (
      <div data-testid="settings">
        <p class="sub">Startup settings of this server (read-only).</p>
        <Readable value={status.settings} />
        <Block title="JSON" value={status.settings} />
      </div>
    );
  }
  const link = status.link?.current?.state;
  return (
    <div data-testid="status">
      <div class="row wrap">
        <span class="grow sub">
          pid {status.pid} · started {readableTime(status.started_at)} · Hub link {link}
          {status.link?.reconnects ? ` (lost ${status.link.reconnects}×)` : ""} · {status.pending_elicitations?.length ?? 0} open questions · as of{" "}
          {readableTime(loadedAt)}
        </span>
        {refresh}
      </div>
      {(status.sections as StatusSection[]).map((section, index) => {
        const uri = widgetOf(catalog, section.tool);
        return (
          <section class="card" data-testid="status-section" data-tool={section.tool}>
            {/* A widget has its own title. */}
            {!uri && <h2>{TITLES[section.tool ?? ""] ?? section.tool ?? "Status"}</h2>}
            {section.error ? (
              <div class="err">{section.error}</div>
            ) : uri ? (
              <WidgetPane iid={iid} call={probeCall(section, index, loadedAt)} uri={uri} />
            ) : (
              <pre class="text">{(section.result?.content ?? []).map((b) => b.text ?? "").join("\n")}</pre>
            )}
          </section>
        );
      })}
    </div>
  );
}

const TITLES: Record<string, string> = {
  processes_overview: "Processes",
  toolsets_list: "Toolsets",
  cmake_profiles: "CMake profiles",
  clangd_configurations: "clangd configurations",
};

const label = (key: string) => key.replace(/_/g, " ").replace(/^./, (c) => c.toUpperCase());

/** Any JSON value as readable text: objects as field tables, lists of objects as cards. */
export function Readable({ value }: { value: unknown }): ComponentChildren {
  if (value === null || value === undefined) return <span class="muted">—</span>;
  if (typeof value !== "object") return <span>{String(value)}</span>;
  if (Array.isArray(value)) {
    if (value.length === 0) return <span class="muted">none</span>;
    if (value.every((v) => typeof v !== "object" || v === null)) return <span>{value.map(String).join(", ")}</span>;
    return (
      <div class="stack">
        {value.map((item) => (
          <div class="card inner">
            <Readable value={item} />
          </div>
        ))}
      </div>
    );
  }
  return (
    <table class="fields">
      <tbody>
        {Object.entries(value as Record<string, unknown>).map(([key, item]) => (
          <tr>
            <th>{label(key)}</th>
            <td>
              <Readable value={item} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
