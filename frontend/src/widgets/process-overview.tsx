// processes_overview: running/completed counts and one card per process, with local filters.
import { useState } from "preact/hooks";

import { Body, mount } from "../shared/app";
import { Outcome, commandLine, type ProcessInfo } from "../shared/process";
import { Copy, Empty, Filter, Time, Toggle, find, matches, seconds } from "../shared/ui";

interface Overview {
  running: number;
  completed: number;
  processes: ProcessInfo[];
}

function List({ overview }: { overview: Overview }) {
  const [query, setQuery] = useState("");
  const [runningOnly, setRunningOnly] = useState(false);
  const shown = overview.processes.filter(
    (p) =>
      (!runningOnly || p.status.current_status === "running") &&
      matches(query, commandLine(p), p.summary.cwd, String(p.summary.process_id), String(p.status.pid)),
  );
  return (
    <Body
      bar={
        <>
          <Filter value={query} onInput={setQuery} placeholder="Filter commands" />
          <Toggle on={runningOnly} set={setRunningOnly}>Running only</Toggle>
        </>
      }
    >
      {shown.length === 0 && <Empty>{overview.processes.length ? "No matching processes." : "No processes."}</Empty>}
      {shown.map((p) => (
        <section class="card process" key={p.summary.process_id}>
          <h2>
            <span>Process {p.summary.process_id}</span>
            <Outcome info={p} />
            <span class="muted">PID {p.status.pid}</span>
          </h2>
          <div class="item mono v">
            {find(commandLine(p), query)}
            <Copy text={commandLine(p)} title="Copy command line" />
          </div>
          <div class="sub">
            Started <Time iso={p.status.started} /> · work time{" "}
            <span title={String(p.status.work_time)}>{seconds(p.status.work_time)}</span> · in{" "}
            <span class="mono">{find(p.summary.cwd, query)}</span>
          </div>
        </section>
      ))}
    </Body>
  );
}

mount<Overview>({
  name: "process-overview",
  view: (overview) => ({
    title: "Processes",
    status: (
      <span class="pill muted">
        {overview.running} running · {overview.completed} completed
      </span>
    ),
    tabs: [{ id: "processes", label: "Processes", view: () => <List overview={overview} /> }],
  }),
});
