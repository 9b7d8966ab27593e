// The admin panel: a tab per ForgeMCP instance with its call history (original widget, text,
// complete JSON), the undo journal (journal.tsx), tool catalog, resources, status and settings; command controls (calls with literal
// JSON arguments, cancel for the panel's own calls) appear only after "Enable command controls";
// questions (elicitations) of panel calls are answered here.
import { useEffect, useState } from "preact/hooks";

import { Copy, JsonView, readableTime } from "../shared/ui";
import { api, type Call, type Catalog, type Elicitation, type Instance } from "./api";
import { useStore } from "./store";
import { Linked, Resources, StatusView, Tools } from "./views";
import { Journal } from "./journal";
import { WidgetPane } from "./widget-pane";

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

/** A progress row: "3/7 message" with a total, else the message alone (never a bare counter). */
export function progressLine(p: Call["progress"][number]) {
  if (p.total != null) return `${p.progress}/${p.total}${p.message ? ` ${p.message}` : ""}`;
  return p.message || `step ${p.progress}`;
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
              {basename(instance.workspace)}{" "}
              <span class="sub" data-testid="instance-client">
                {instance.client ?? "waiting for a client"} · pid {instance.pid}
              </span>
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

type Section = "history" | "journal" | "tools" | "resources" | "status" | "settings";

function InstanceView({ instance, hubLost }: { instance: Instance; hubLost: boolean }) {
  const s = useStore();
  const iid = instance.instance_id;
  const data = s.dataOf(iid);
  const [section, setSection] = useState<Section>("history");
  const [selectedCall, setSelectedCall] = useState<number | null>(null);
  // A process reference followed from a call: the Resources view reads it.
  const [opened, setOpened] = useState<string | undefined>(undefined);
  const openUri = (uri: string) => {
    setOpened(uri);
    setSection("resources");
  };
  useEffect(() => void s.loadCatalog(iid), [iid]);
  const state = hubLost ? "reconnecting" : instance.state;
  const sections: [Section, string][] = [
    ["history", "History"],
    ["journal", "Journal"],
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
        <History
          iid={iid}
          calls={[...data.calls.values()]}
          error={data.historyError}
          catalog={data.catalog}
          selected={selectedCall}
          select={setSelectedCall}
          open={openUri}
        />
      )}
      {section === "journal" && <Journal iid={iid} calls={data.calls} catalog={data.catalog} controls={s.controls} />}
      {section === "tools" && (
        <Tools
          iid={iid}
          catalog={data.catalog}
          error={data.catalogError}
          controls={s.controls}
          onStarted={(callId) => {
            setSelectedCall(callId);
            setSection("history");
          }}
        />
      )}
      {section === "resources" && <Resources iid={iid} catalog={data.catalog} error={data.catalogError} open={opened} />}
      {section === "status" && <StatusView iid={iid} part="status" catalog={data.catalog} />}
      {section === "settings" && <StatusView iid={iid} part="settings" catalog={data.catalog} />}
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
  open: (uri: string) => void;
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
                <span class="mono grow name" title={call.tool}>
                  {call.tool}
                </span>
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
        {current ? <CallDetail key={current.call_id} iid={props.iid} call={current} catalog={props.catalog} open={props.open} /> : <div class="empty">Select a call.</div>}
      </div>
    </div>
  );
}

function CallDetail({ iid, call, catalog, open }: { iid: string; call: Call; catalog?: Catalog; open?: (uri: string) => void }) {
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
              <span class="sub">{readableTime(p.at)}</span> <Linked text={progressLine(p)} open={open} />
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
      {view === "text" && (
        <pre class="text" data-testid="call-text">
          <Linked text={resultText(call)} open={open} />
        </pre>
      )}
      {view === "json" && (
        <div data-testid="call-json">
          <JsonView value={call.result ?? call.error ?? null} />
        </div>
      )}
    </div>
  );
}

