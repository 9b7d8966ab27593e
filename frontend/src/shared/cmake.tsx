// CMake execution results shared by the configure, build, test and run-test widgets.
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";

import { Body, type View } from "./app";
import { Copy, Empty, Filter, matches, Status } from "./ui";

export interface Execution {
  profile: string;
  preset: string | null;
  error: string | null;
  process_id: number | null;
}

export const executionName = (e: Execution) => (e.preset ? `${e.profile} (preset: ${e.preset})` : e.profile);

/** "Command output: process_get(process_id=N)" or "Process: not available". */
export function ProcessLink({ id }: { id: number | null }) {
  if (id === null) return <div class="sub">Process: not available</div>;
  const call = `process_get(process_id=${id})`;
  return (
    <div class="sub item">
      Command output: <span class="mono">{call}</span> <Copy text={call} title="Copy process_get call" />
    </div>
  );
}

/** One card per execution with its outcome; `body` adds the tool's own fields. */
export function Executions<T extends Execution>({ items, body }: { items: T[]; body: (item: T) => ComponentChildren }) {
  const [query, setQuery] = useState("");
  const [failedOnly, setFailedOnly] = useState(false);
  const shown = items.filter((e) => (!failedOnly || e.error !== null) && matches(query, executionName(e), e.error));
  return (
    <Body
      bar={
        <>
          <Filter value={query} onInput={setQuery} placeholder="Filter profiles" />
          <button aria-pressed={failedOnly ? "true" : "false"} onClick={() => setFailedOnly(!failedOnly)}>
            Failed only
          </button>
        </>
      }
    >
      {shown.length === 0 && <Empty>{items.length ? "No matching executions." : "No executions."}</Empty>}
      {shown.map((e) => (
        <section class="card execution" key={executionName(e)}>
          <h2>
            {executionName(e)} <Status ok={e.error === null}>{e.error === null ? "Succeeded" : "Failed"}</Status>
          </h2>
          {body(e)}
          {e.error !== null && <div class="err"><pre>{e.error}</pre></div>}
          <ProcessLink id={e.process_id} />
        </section>
      ))}
    </Body>
  );
}

/** The header of a list of executions: `<kind> results: X succeeded; Y failed`. */
export function executionsView<T extends Execution>(kind: string, items: T[], body: (item: T) => ComponentChildren): View {
  const failed = items.filter((e) => e.error !== null).length;
  return {
    title: `${kind} results`,
    status: (
      <Status ok={failed === 0}>
        {items.length - failed} succeeded · {failed} failed
      </Status>
    ),
    tabs: [{ id: "results", label: "Results", view: () => <Executions items={items} body={body} /> }],
  };
}
