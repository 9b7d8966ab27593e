// The widget shell: waits for the tool input and result, then shows the widget's own tabs plus the
// complete JSON result; the header has the title, a status pill and "copy all" (the original result).
import "./console.css";

import type { ComponentChildren } from "preact";
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";

import { connect, type ToolResult, type ViewEvent } from "./bridge";
import { Copy, Empty, JsonView } from "./ui";

export interface Tab {
  id: string;
  label: string;
  view: () => ComponentChildren;
}

export interface View {
  title: ComponentChildren;
  status?: ComponentChildren;
  tabs: Tab[];
}

export type Input = Record<string, unknown>;

export interface WidgetSpec<T> {
  name: string;
  /** Builds the views from `structuredContent`; `input` holds the call's arguments when known. */
  view: (data: T, input: Input) => View;
}

type Phase =
  | { kind: "waiting" }
  | { kind: "running" }
  | { kind: "cancelled"; reason?: string }
  | { kind: "done"; result: ToolResult };

const resultText = (result: ToolResult) =>
  (result.content ?? []).map((block) => block.text ?? "").filter(Boolean).join("\n");

function Shell<T>({ spec }: { spec: WidgetSpec<T> }) {
  const [phase, setPhase] = useState<Phase>({ kind: "waiting" });
  const [input, setInput] = useState<Input>({});
  const [tab, setTab] = useState<string | null>(null);
  useEffect(() => {
    const onEvent = (event: ViewEvent) => {
      if (event.kind === "input") {
        setInput(event.arguments);
        setPhase((p) => (p.kind === "done" ? p : { kind: "running" }));
      } else if (event.kind === "result") setPhase({ kind: "done", result: event.result });
      else if (event.kind === "cancelled") setPhase({ kind: "cancelled", reason: event.reason });
    };
    connect(spec.name, onEvent).catch((error: Error) => setPhase({ kind: "cancelled", reason: error.message }));
  }, []);

  if (phase.kind !== "done") {
    const message =
      phase.kind === "waiting" ? "Waiting for the tool call…" :
      phase.kind === "running" ? "Running…" : `Cancelled${phase.reason ? `: ${phase.reason}` : "."}`;
    return (
      <>
        <header><h1>ForgeMCP</h1></header>
        <main><Empty>{message}</Empty></main>
      </>
    );
  }

  const { result } = phase;
  let view: View;
  if (result.isError) {
    view = {
      title: "Tool error",
      status: <span class="pill bad">Error</span>,
      tabs: [{ id: "error", label: "Error", view: () => <Body><div class="err"><pre>{resultText(result)}</pre></div></Body> }],
    };
  } else if (result.structuredContent === undefined || result.structuredContent === null) {
    view = { title: "Result", tabs: [{ id: "text", label: "Text", view: () => <Body><pre class="v">{resultText(result)}</pre></Body> }] };
  } else {
    view = spec.view(result.structuredContent as T, input);
  }
  const tabs = [...view.tabs, { id: "json", label: "JSON", view: () => <Body><JsonView value={result} /></Body> }];
  const current = tabs.find((t) => t.id === tab) ?? tabs[0];
  return (
    <>
      <header>
        <h1>{view.title}</h1>
        {view.status}
        <nav class="tabs" role="tablist">
          {tabs.map((t) => (
            <button role="tab" aria-selected={t.id === current.id ? "true" : "false"} onClick={() => setTab(t.id)}>
              {t.label}
            </button>
          ))}
        </nav>
        <Copy text={() => JSON.stringify(result, null, 2)} title="Copy all (JSON result)" />
      </header>
      <TabBody key={current.id} view={current.view} />
    </>
  );
}

/** Renders a tab as its own component, so hooks inside a tab's view belong to that tab. */
const TabBody = ({ view }: { view: () => ComponentChildren }) => <>{view()}</>;

export function mount<T>(spec: WidgetSpec<T>) {
  render(<Shell spec={spec} />, document.getElementById("root")!);
}

/** A tab body: an optional tool bar (filters, toggles) above the scrolling area. */
export function Body({ bar, children }: { bar?: ComponentChildren; children: ComponentChildren }) {
  return (
    <>
      {bar && <div class="bar">{bar}</div>}
      <main>{children}</main>
    </>
  );
}
