// The debug tools: a stop (reason, stack, source excerpt, variables tree), an inspection (sessions,
// threads, frames, scopes, a value), breakpoints, and an ended session. Told apart by shape.
import { useState } from "preact/hooks";

import { Body, mount, type Tab } from "../shared/app";
import { cppLines, isCpp } from "../shared/cpp";
import { Code, Copy, Empty, Fields, Toggle, plural } from "../shared/ui";

interface Frame {
  id: number;
  function: string;
  path: string | null;
  line: number;
}

interface Excerpt {
  path: string;
  line: number;
  start_line: number;
  lines: string[];
}

interface Value {
  name: string;
  type: string | null;
  value: string;
  children: Value[];
  more: boolean;
}

interface Breakpoint {
  spec: string;
  bound: boolean;
  path: string | null;
  line: number | null;
  message: string | null;
}

interface Stop {
  session_id: number;
  state: "stopped" | "running" | "exited";
  reason: string;
  summary: string;
  signal: string | null;
  exit_code: number | null;
  thread_id: number | null;
  frames: Frame[];
  source: Excerpt | null;
  locals: Value[];
  output: string;
  breakpoints: Breakpoint[];
  ended: boolean;
}

interface SessionInfo {
  session_id: number;
  executable: string;
  adapter: string;
  state: string;
  process_id: number;
  debuggee_process_id: number | null;
  pid: number | null;
  remaining_seconds: number;
}

interface Inspection {
  sessions: SessionInfo[];
  threads: { id: number; name: string }[];
  frames: Frame[];
  source: Excerpt | null;
  scopes: { name: string; variables: Value[]; skipped: boolean }[];
  value: Value | null;
}

interface Breakpoints {
  session_id: number;
  breakpoints: Breakpoint[];
}

interface Ended {
  session_id: number;
  executable: string;
  exit_code: number | null;
}

type Result = Stop | Inspection | Breakpoints | Ended;

const place = (f: { path: string | null; line: number | null }) => (f.path ? `${f.path}:${f.line}` : "");

function Frames({ frames }: { frames: Frame[] }) {
  if (!frames.length) return null;
  return (
    <section class="card">
      <h2>
        <span>Stack</span>
        <span class="muted">{plural(frames.length, "frame")}</span>
      </h2>
      {frames.map((f, i) => (
        <div class="item mono" key={f.id}>
          <span class="muted">{i}</span> {f.function}
          {f.path && <span class="muted"> at {place(f)}</span>}
          {f.path && <Copy text={place(f)} title="Copy location" />}
        </div>
      ))}
    </section>
  );
}

function Source({ source }: { source: Excerpt }) {
  const [wrap, setWrap] = useState(false);
  const colored = isCpp(source.path) ? cppLines(source.lines) : source.lines;
  return (
    <section class="card">
      <h2>
        <span class="mono">{source.path}</span>
        <Toggle on={wrap} set={setWrap}>Wrap lines</Toggle>
      </h2>
      <Code
        wrap={wrap}
        lines={colored.map((body, i) => {
          const n = source.start_line + i;
          return { n, body, cls: n === source.line ? "add" : undefined };
        })}
      />
    </section>
  );
}

function Tree({ values }: { values: Value[] }) {
  return (
    <ul class="tree">
      {values.map((v, i) => (
        <li key={i}>
          {v.children.length ? (
            <details open>
              <summary>
                <Row v={v} />
              </summary>
              <Tree values={v.children} />
            </details>
          ) : (
            <Row v={v} />
          )}
        </li>
      ))}
    </ul>
  );
}

const Row = ({ v }: { v: Value }) => (
  <span class="mono">
    {v.name}
    {v.type && <span class="muted"> ({v.type})</span>} = {v.value}
    {v.more && <span class="muted"> …</span>}
  </span>
);

function Variables({ title, values }: { title: string; values: Value[] }) {
  return (
    <section class="card">
      <h2>
        <span>{title}</span>
      </h2>
      {values.length ? <Tree values={values} /> : <Empty>None.</Empty>}
    </section>
  );
}

function BreakpointList({ list }: { list: Breakpoint[] }) {
  if (!list.length) return <Empty>No breakpoints.</Empty>;
  return (
    <section class="card">
      {list.map((b) => (
        <div class="item mono" key={b.spec}>
          <span class={b.bound ? "pill ok" : "pill bad"}>{b.bound ? "Bound" : "Not bound"}</span> {b.spec}
          {b.path && <span class="muted"> at {place(b)}</span>}
          {b.message && <div class="sub">{b.message}</div>}
        </div>
      ))}
    </section>
  );
}

function stopTabs(stop: Stop): Tab[] {
  const tabs: Tab[] = [
    {
      id: "stop",
      label: "Stop",
      view: () => (
        <Body>
          <div class={stop.signal ? "err" : "sub"}>
            <pre>{stop.summary}</pre>
          </div>
          <Frames frames={stop.frames} />
          {stop.source && <Source source={stop.source} />}
          {stop.state === "stopped" && <Variables title="Locals" values={stop.locals} />}
        </Body>
      ),
    },
  ];
  if (stop.output) {
    tabs.push({ id: "output", label: "Output", view: () => <Body><pre class="mono">{stop.output}</pre></Body> });
  }
  if (stop.breakpoints.length) {
    tabs.push({ id: "breakpoints", label: "Breakpoints", view: () => <Body><BreakpointList list={stop.breakpoints} /></Body> });
  }
  return tabs;
}

function inspectionView(found: Inspection) {
  if (found.value) return <Variables title="Value" values={[found.value]} />;
  if (found.scopes.length)
    return found.scopes.map((s) =>
      s.skipped ? <Empty key={s.name}>{s.name}: not expanded.</Empty> : <Variables key={s.name} title={s.name} values={s.variables} />,
    );
  if (found.frames.length)
    return (
      <>
        <Frames frames={found.frames} />
        {found.source && <Source source={found.source} />}
      </>
    );
  if (found.threads.length)
    return (
      <Fields rows={found.threads.map((t) => [`Thread ${t.id}`, t.name, String(t.id)] as [string, string, string])} />
    );
  if (!found.sessions.length) return <Empty>No debug sessions are running.</Empty>;
  return found.sessions.map((s) => (
    <section class="card" key={s.session_id}>
      <h2>
        <span>Session {s.session_id}</span>
        <span class="pill muted">{s.state}</span>
      </h2>
      <Fields
        rows={[
          ["Executable", s.executable, s.executable],
          ["Adapter", `${s.adapter} (process ${s.process_id})`],
          ["Debuggee", `${s.debuggee_process_id === null ? "not started" : `process ${s.debuggee_process_id}`}${s.pid === null ? "" : `, PID ${s.pid}`}`],
          ["Ends in", `${s.remaining_seconds} s`],
        ]}
      />
    </section>
  ));
}

mount<Result>({
  name: "debug",
  view: (result) => {
    if ("summary" in result) {
      const ok = result.state === "exited" ? result.exit_code === 0 : result.signal === null;
      const label = result.state === "exited" ? `Exited ${result.exit_code ?? ""}`.trim() : result.signal ?? result.reason;
      return { title: `Debug session ${result.session_id}`, status: <span class={ok ? "pill ok" : "pill bad"}>{label}</span>, tabs: stopTabs(result) };
    }
    if ("sessions" in result) {
      return { title: "Debug inspection", tabs: [{ id: "inspect", label: "Inspect", view: () => <Body>{inspectionView(result)}</Body> }] };
    }
    if ("breakpoints" in result) {
      return {
        title: `Debug session ${result.session_id} breakpoints`,
        tabs: [{ id: "breakpoints", label: "Breakpoints", view: () => <Body><BreakpointList list={result.breakpoints} /></Body> }],
      };
    }
    return {
      title: `Debug session ${result.session_id} ended`,
      tabs: [{ id: "fields", label: "Fields", view: () => <Body><Fields rows={[["Executable", result.executable, result.executable], ["Exit code", result.exit_code === null ? "None" : String(result.exit_code)]]} /></Body> }],
    };
  },
});
