// The admin panel: a tab per ForgeMCP instance with its call history (original widget, text,
// complete JSON), tool catalog, resources, status and settings; command controls (calls with literal
// JSON arguments, cancel for the panel's own calls) appear only after "Enable command controls";
// questions (elicitations) of panel calls are answered here.
import type { ComponentChildren } from "preact";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";

import { Copy, JsonView, readableTime } from "../shared/ui";
import { api, type Call, type Catalog, type Elicitation, type Instance, type ResourceContents, sandboxOrigin, type Tool } from "./api";
import { WidgetHost } from "./host";
import { useStore } from "./store";

const theme = (): "light" | "dark" => (matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light");

const basename = (path: string) => path.replace(/[\\/]+$/, "").split(/[\\/]/).pop() || path;

const STATE_LABEL: Record<Call["state"], string> = {
  running: "running",
  completed: "completed",
  tool_error: "tool error",
  protocol_error: "failed",
  cancelled: "cancelled",
  input_required: "input required",
};

const stateClass = (state: Call["state"]) =>
  state === "completed" ? "ok" : state === "running" ? "run" : state === "cancelled" ? "muted" : "bad";

const resultText = (call: Call) =>
  call.result
    ? (call.result.content ?? []).map((block) => block.text ?? `[${block.type} content]`).join("\n")
    : call.error
      ? `Error ${call.error.code}: ${call.error.message}`
      : call.state === "running"
        ? "Running…"
        : `No result (${STATE_LABEL[call.state]}).`;

function duration(call: Call): string {
  if (!call.finished_at) return "";
  const ms = Date.parse(call.finished_at) - Date.parse(call.started_at);
  return Number.isFinite(ms) ? `${(ms / 1000).toFixed(3)} s` : "";
}

function progressLine(p: Call["progress"][number]) {
  const count = p.total != null ? `${p.progress}/${p.total}` : `${p.progress}`;
  return `${count}${p.message ? ` ${p.message}` : ""}`;
}

// ---------------------------------------------------------------------------------------------

export function App() {
  const s = useStore();
  const instances = s.sortedInstances();
  const [selected, setSelected] = useState<string | null>(null);
  const current = instances.find((i) => i.instance_id === selected) ?? instances[0];
  const hubLost = s.hub === "lost" || s.hub === "signed-out";
  return (
    <>
      <header class="top">
        <h1>ForgeMCP admin</h1>
        <span class={`pill ${s.hub === "live" ? "ok" : s.hub === "connecting" ? "muted" : "bad"}`} data-testid="hub-state">
          {s.hub === "live" ? "Hub connected" : s.hub === "connecting" ? "connecting…" : s.hub === "lost" ? "Hub connection lost" : "signed out"}
        </span>
        <label class="controls">
          <input
            type="checkbox"
            data-testid="controls-toggle"
            checked={s.controls}
            onChange={(e) => {
              s.controls = (e.currentTarget as HTMLInputElement).checked;
              s.changed();
            }}
          />
          Enable command controls
        </label>
      </header>
      {s.hub === "lost" && (
        <div class="banner warn" data-testid="hub-banner">
          The connection to the admin Hub is lost; reconnecting… The servers keep running and keep their history.
        </div>
      )}
      {s.hub === "signed-out" && (
        <div class="banner bad" data-testid="hub-banner">
          This panel is not signed in to the running admin Hub (it may have restarted). Run <code>forgemcp --open-admin</code> to open
          it again.
        </div>
      )}
      <nav class="tabs instances" role="tablist">
        {instances.map((instance) => {
          const state = hubLost ? "reconnecting" : instance.state;
          return (
            <button
              role="tab"
              data-testid="instance-tab"
              data-state={state}
              aria-selected={instance.instance_id === current?.instance_id ? "true" : "false"}
              title={instance.workspace}
              onClick={() => setSelected(instance.instance_id)}
            >
              {basename(instance.workspace)} <span class="sub">pid {instance.pid}</span>
              {state === "reconnecting" && <span class="pill warn">reconnecting</span>}
            </button>
          );
        })}
      </nav>
      {current ? (
        <InstanceView key={current.instance_id} instance={current} hubLost={hubLost} />
      ) : (
        <main class="empty">{s.hub === "live" ? "No ForgeMCP server is connected to this Hub." : "Waiting for the Hub…"}</main>
      )}
    </>
  );
}

type Section = "history" | "tools" | "resources" | "status" | "settings";

function InstanceView({ instance, hubLost }: { instance: Instance; hubLost: boolean }) {
  const s = useStore();
  const iid = instance.instance_id;
  const data = s.dataOf(iid);
  const [section, setSection] = useState<Section>("history");
  const [selectedCall, setSelectedCall] = useState<number | null>(null);
  useEffect(() => void s.loadCatalog(iid), [iid]);
  const state = hubLost ? "reconnecting" : instance.state;
  const sections: [Section, string][] = [
    ["history", "History"],
    ["tools", "Tools"],
    ["resources", "Resources"],
    ["status", "Status"],
    ["settings", "Settings"],
  ];
  return (
    <main class="instance" data-testid="instance" data-instance={iid}>
      <div class="info">
        <span class="mono" title="workspace">{instance.workspace}</span>
        <span class="sub">pid {instance.pid} · ForgeMCP {instance.version} · started {readableTime(instance.started_at)}</span>
        <span class={`pill ${state === "connected" ? "ok" : "warn"}`} data-testid="instance-state">{state}</span>
        {instance.reconnects > 0 && <span class="sub">link lost {instance.reconnects}×</span>}
      </div>
      {[...data.elicitations.values()].map((elicitation) => (
        <ElicitationCard key={elicitation.elicitation_id} iid={iid} elicitation={elicitation} />
      ))}
      <nav class="tabs sections" role="tablist">
        {sections.map(([id, label]) => (
          <button role="tab" aria-selected={id === section ? "true" : "false"} onClick={() => setSection(id)}>
            {label}
          </button>
        ))}
      </nav>
      {section === "history" && (
        <History iid={iid} calls={[...data.calls.values()]} error={data.historyError} catalog={data.catalog} selected={selectedCall} select={setSelectedCall} />
      )}
      {section === "tools" && (
        <Tools
          iid={iid}
          catalog={data.catalog}
          error={data.catalogError}
          onStarted={(callId) => {
            setSelectedCall(callId);
            setSection("history");
          }}
        />
      )}
      {section === "resources" && <Resources iid={iid} catalog={data.catalog} error={data.catalogError} />}
      {section === "status" && <StatusView iid={iid} part="status" />}
      {section === "settings" && <StatusView iid={iid} part="settings" />}
    </main>
  );
}

// ---------------------------------------------------------------------------------------------
// Elicitations of panel calls.

function ElicitationCard({ iid, elicitation }: { iid: string; elicitation: Elicitation }) {
  const properties = Object.entries(elicitation.requested_schema?.properties ?? {});
  const [values, setValues] = useState<Record<string, unknown>>(() =>
    Object.fromEntries(properties.map(([name, p]) => [name, p.type === "boolean" ? false : ""])),
  );
  const [error, setError] = useState<string | null>(null);
  const answer = async (action: "accept" | "decline" | "cancel") => {
    try {
      await api.answer(iid, elicitation.elicitation_id, action, action === "accept" ? values : undefined);
    } catch (e) {
      setError((e as Error).message);
    }
  };
  return (
    <div class="card elicitation" data-testid="elicitation">
      <h2>A panel call asks for confirmation</h2>
      <p data-testid="elicitation-message">{elicitation.message}</p>
      {properties.map(([name, p]) => (
        <label class="field">
          {p.type === "boolean" ? (
            <input
              type="checkbox"
              data-testid={`elicitation-field-${name}`}
              checked={Boolean(values[name])}
              onChange={(e) => setValues({ ...values, [name]: (e.currentTarget as HTMLInputElement).checked })}
            />
          ) : p.type === "number" || p.type === "integer" ? (
            <input
              type="number"
              data-testid={`elicitation-field-${name}`}
              value={String(values[name] ?? "")}
              onInput={(e) => setValues({ ...values, [name]: Number((e.currentTarget as HTMLInputElement).value) })}
            />
          ) : (
            <input
              type="text"
              data-testid={`elicitation-field-${name}`}
              value={String(values[name] ?? "")}
              onInput={(e) => setValues({ ...values, [name]: (e.currentTarget as HTMLInputElement).value })}
            />
          )}{" "}
          {p.title ?? p.description ?? name}
        </label>
      ))}
      <div class="row">
        <button data-testid="elicitation-accept" onClick={() => answer("accept")}>Accept</button>
        <button data-testid="elicitation-decline" onClick={() => answer("decline")}>Decline</button>
        <button onClick={() => answer("cancel")}>Cancel</button>
      </div>
      {error && <div class="err">{error}</div>}
    </div>
  );
}

// ---------------------------------------------------------------------------------------------
// History.

function History(props: {
  iid: string;
  calls: Call[];
  error?: string;
  catalog?: Catalog;
  selected: number | null;
  select: (id: number) => void;
}) {
  const { calls, selected } = props;
  const newestFirst = [...calls].reverse();
  const current = calls.find((c) => c.call_id === selected) ?? newestFirst[0];
  return (
    <div class="split">
      <ul class="calls" data-testid="history">
        {props.error && <li class="err">History unavailable: {props.error}</li>}
        {newestFirst.length === 0 && <li class="empty">No tool calls yet.</li>}
        {newestFirst.map((call) => {
          const last = call.progress[call.progress.length - 1];
          return (
            <li
              key={call.call_id}
              data-testid="history-entry"
              data-call={call.call_id}
              data-state={call.state}
              data-origin={call.origin}
              class={call.call_id === current?.call_id ? "sel" : ""}
              onClick={() => props.select(call.call_id)}
            >
              <div class="row">
                <span class="mono grow">{call.tool}</span>
                <span class={`pill ${call.origin === "panel" ? "accent" : "muted"}`}>{call.origin === "panel" ? "panel" : "client"}</span>
                <span class={`pill ${stateClass(call.state)}`}>{STATE_LABEL[call.state]}</span>
              </div>
              <div class="sub">
                #{call.call_id} · {readableTime(call.started_at)}
                {call.state === "running" && last ? ` · ${progressLine(last)}` : ""}
              </div>
            </li>
          );
        })}
      </ul>
      <div class="detail">
        {current ? <CallDetail key={current.call_id} iid={props.iid} call={current} catalog={props.catalog} /> : <div class="empty">Select a call.</div>}
      </div>
    </div>
  );
}

function CallDetail({ iid, call, catalog }: { iid: string; call: Call; catalog?: Catalog }) {
  const s = useStore();
  const tool = catalog?.tools.find((t) => t.name === call.tool);
  const widgetUri = tool?._meta?.ui?.resourceUri ?? tool?._meta?.["ui/resourceUri"];
  // Until the user picks a view: the widget when the tool has one (the catalog may arrive later).
  const [picked, setView] = useState<"widget" | "text" | "json" | null>(null);
  const view = picked ?? (widgetUri ? "widget" : "text");
  const [cancelError, setCancelError] = useState<string | null>(null);
  const canCancel = s.controls && call.origin === "panel" && call.state === "running";
  return (
    <div data-testid="call-detail" data-call={call.call_id} data-state={call.state}>
      <div class="row head">
        <h2 class="grow">
          #{call.call_id} <span class="mono">{call.tool}</span>
        </h2>
        <span class={`pill ${call.origin === "panel" ? "accent" : "muted"}`}>{call.origin === "panel" ? "from the panel" : "from the MCP client"}</span>
        <span class={`pill ${stateClass(call.state)}`} data-testid="call-state">{STATE_LABEL[call.state]}</span>
        {canCancel && (
          <button
            data-testid="call-cancel"
            onClick={async () => {
              try {
                await api.cancelCall(iid, call.call_id);
              } catch (e) {
                setCancelError((e as Error).message);
              }
            }}
          >
            Cancel
          </button>
        )}
      </div>
      {cancelError && <div class="err">{cancelError}</div>}
      <div class="sub">
        started {readableTime(call.started_at)}
        {call.finished_at && ` · finished ${readableTime(call.finished_at)} · ${duration(call)}`}
      </div>
      <details open>
        <summary>Arguments</summary>
        <JsonView value={call.arguments} />
      </details>
      <details open>
        <summary>
          Progress ({call.progress.length}
          {call.progress_dropped ? ` of ${call.progress.length + call.progress_dropped}` : ""})
        </summary>
        <ol class="progress" data-testid="progress">
          {call.progress.map((p) => (
            <li>
              <span class="sub">{readableTime(p.at)}</span> {progressLine(p)}
            </li>
          ))}
        </ol>
      </details>
      <nav class="tabs" role="tablist">
        {widgetUri && (
          <button role="tab" aria-selected={view === "widget" ? "true" : "false"} onClick={() => setView("widget")}>
            Widget
          </button>
        )}
        <button role="tab" aria-selected={view === "text" ? "true" : "false"} onClick={() => setView("text")}>
          Text
        </button>
        <button role="tab" aria-selected={view === "json" ? "true" : "false"} onClick={() => setView("json")}>
          JSON
        </button>
        <Copy text={() => JSON.stringify(call.result ?? call.error, null, 2)} title="Copy the complete JSON result" />
      </nav>
      {view === "widget" && widgetUri && <WidgetPane iid={iid} call={call} uri={widgetUri} />}
      {view === "text" && <pre class="text" data-testid="call-text">{resultText(call)}</pre>}
      {view === "json" && (
        <div data-testid="call-json">
          <JsonView value={call.result ?? call.error ?? null} />
        </div>
      )}
    </div>
  );
}

/** Widget documents, read once per instance and URI. */
const widgetCache = new Map<string, Promise<ResourceContents>>();

function readWidget(iid: string, uri: string): Promise<ResourceContents> {
  const key = `${iid} ${uri}`;
  let pending = widgetCache.get(key);
  if (!pending) {
    pending = api.readResource(iid, uri).then(({ contents }) => {
      if (contents.length !== 1) throw new Error(`${uri} has ${contents.length} content items, not one`);
      if (contents[0].mimeType !== "text/html;profile=mcp-app") throw new Error(`${uri} is not an MCP App (${contents[0].mimeType})`);
      return contents[0];
    });
    pending.catch(() => widgetCache.delete(key));
    widgetCache.set(key, pending);
  }
  return pending;
}

function WidgetPane({ iid, call, uri }: { iid: string; call: Call; uri: string }) {
  const box = useRef<HTMLDivElement>(null);
  const host = useRef<WidgetHost | null>(null);
  // The host starts when the widget document has loaded, which may be after the call has ended:
  // it must start from the newest state of the call, not the one this effect began with.
  const latest = useRef(call);
  latest.current = call;
  const [error, setError] = useState<string | null>(null);
  const [log, setLog] = useState<string[]>([]);
  useEffect(() => {
    let live = true;
    readWidget(iid, uri).then(
      (contents) => {
        if (!live || !box.current) return;
        const html = contents.text ?? (contents.blob ? new TextDecoder().decode(Uint8Array.from(atob(contents.blob), (c) => c.charCodeAt(0))) : "");
        host.current = new WidgetHost(box.current, latest.current, {
          sandboxOrigin,
          html,
          ui: contents._meta?.ui as WidgetHostUi,
          toolName: call.tool,
          theme: theme(),
          read: (resource) => api.readResource(iid, resource),
          log: (line) => setLog((lines) => [...lines.slice(-20), line]),
        });
      },
      (e: Error) => live && setError(e.message),
    );
    return () => {
      live = false;
      void host.current?.destroy();
      host.current = null;
    };
  }, [iid, uri, call.call_id]);
  useEffect(() => host.current?.update(call), [call]);
  useEffect(() => {
    // The widget follows the panel's light or dark scheme as it changes.
    const scheme = matchMedia("(prefers-color-scheme: dark)");
    const changed = () => host.current?.setTheme(theme());
    scheme.addEventListener("change", changed);
    return () => scheme.removeEventListener("change", changed);
  }, []);
  return (
    <div class="widget">
      {error && <div class="err">The widget could not be loaded: {error}</div>}
      <div ref={box} data-testid="widget-box" />
      {log.length > 0 && (
        <ul class="log">
          {log.map((line) => (
            <li class="sub">{line}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

type WidgetHostUi = { permissions?: { clipboardWrite?: object } } | undefined;

// ---------------------------------------------------------------------------------------------
// Tools.

function Tools({ iid, catalog, error, onStarted }: { iid: string; catalog?: Catalog; error?: string; onStarted: (callId: number) => void }) {
  const s = useStore();
  const [name, setName] = useState<string | null>(null);
  if (error) return <div class="err">The tool list is unavailable: {error}</div>;
  if (!catalog) return <div class="empty">Loading tools…</div>;
  const tool = catalog.tools.find((t) => t.name === name) ?? catalog.tools[0];
  return (
    <div class="split">
      <ul class="calls" data-testid="tools">
        {catalog.tools.map((t) => (
          <li class={t.name === tool?.name ? "sel" : ""} data-testid="tool" data-tool={t.name} onClick={() => setName(t.name)}>
            <div class="mono">{t.name}</div>
            <div class="sub">{t.title ?? ""}</div>
          </li>
        ))}
      </ul>
      <div class="detail">{tool && <ToolDetail key={tool.name} iid={iid} tool={tool} controls={s.controls} onStarted={onStarted} />}</div>
    </div>
  );
}

function ToolDetail({ iid, tool, controls, onStarted }: { iid: string; tool: Tool; controls: boolean; onStarted: (id: number) => void }) {
  const [args, setArgs] = useState("{}");
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
      <p>{tool.description}</p>
      {controls && (
        <div class="card run" data-testid="call-form">
          <label for="call-arguments">Arguments (literal JSON)</label>
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

function Block({ title, value, open }: { title: string; value: unknown; open?: boolean }) {
  return (
    <details open={open}>
      <summary>{title}</summary>
      <JsonView value={value} />
    </details>
  );
}

// ---------------------------------------------------------------------------------------------
// Resources.

function Resources({ iid, catalog, error }: { iid: string; catalog?: Catalog; error?: string }) {
  const [uri, setUri] = useState("");
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
              {c.text !== undefined ? <pre class="text">{c.text}</pre> : <div>{c.blob ? `${Math.floor((c.blob.length * 3) / 4)} bytes of binary content` : "empty"}</div>}
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
            <span class="sub">{r.mimeType} · {r.description ?? r.name}</span>
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
            <span class="sub">{t.mimeType} · {t.description ?? t.name}</span>
          </li>
        ))}
      </ul>
    </div>
  );
}

// ---------------------------------------------------------------------------------------------
// Status and settings (one request: settings come with the status).

function StatusView({ iid, part }: { iid: string; part: "status" | "settings" }) {
  const [status, setStatus] = useState<any>(null);
  const [error, setError] = useState<string | null>(null);
  const load = useMemo(
    () => () => {
      setError(null);
      api.status(iid).then(setStatus, (e: Error) => setError(e.message));
    },
    [iid],
  );
  useEffect(load, [load]);
  const refresh = <button onClick={load}>Refresh</button>;
  if (error) return <div class="err">Status unavailable: {error} {refresh}</div>;
  if (!status) return <div class="empty">Loading…</div>;
  if (part === "settings") {
    return (
      <div data-testid="settings">
        <p class="sub">Startup settings of this server (read-only).</p>
        <SettingsTable settings={status.settings} />
        <Block title="JSON" value={status.settings} />
      </div>
    );
  }
  return (
    <div data-testid="status">
      <div class="row">
        <span class="grow sub">
          pid {status.pid} · link {status.link?.current?.state} · link lost {status.link?.reconnects ?? 0}× · {status.pending_elicitations?.length ?? 0} open
          questions
        </span>
        {refresh}
      </div>
      <DebugSessions sections={status.sections as any[]} />
      {(status.sections as any[]).map((section) => (
        <section class="card" data-testid="status-section" data-tool={section.tool}>
          <h2 class="mono">{section.tool ?? "status"}</h2>
          {section.error ? <div class="err">{section.error}</div> : <pre class="text">{(section.result?.content ?? []).map((b: any) => b.text ?? "").join("\n")}</pre>}
          {section.result && <Block title="JSON" value={section.result.structuredContent ?? section.result} />}
        </section>
      ))}
    </div>
  );
}

/** The live debug sessions, from the `debug_inspect` status probe (issue 15). */
function DebugSessions({ sections }: { sections: any[] }) {
  const sessions: any[] | undefined = sections.find((s) => s.tool === "debug_inspect")?.result?.structuredContent?.sessions;
  if (!sessions) return null;
  return (
    <section class="card" data-testid="debug-sessions">
      <h2>Debug sessions</h2>
      {sessions.length === 0 ? (
        <div class="sub">None running.</div>
      ) : (
        <ul class="list">
          {sessions.map((s) => (
            <li class="mono" data-session={s.session_id}>
              session {s.session_id}: {s.executable} · {s.adapter} · {s.state} · process {s.process_id}
              {s.debuggee_process_id != null ? ` · debuggee process ${s.debuggee_process_id}` : ""}
              {s.pid != null ? ` · pid ${s.pid}` : ""} · ends in {s.remaining_seconds} s
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function SettingsTable({ settings }: { settings: Record<string, unknown> }) {
  const show = (value: unknown): ComponentChildren =>
    typeof value === "string" ? value : value === null || value === undefined ? "—" : Array.isArray(value) && value.length === 0 ? "none" : JSON.stringify(value);
  return (
    <table class="fields">
      <tbody>
        {Object.entries(settings ?? {}).map(([key, value]) => (
          <tr>
            <th>{key}</th>
            <td>{show(value)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
