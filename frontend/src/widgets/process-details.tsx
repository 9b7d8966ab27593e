// process_get: the selected transcript fragments (stream, readable time, elapsed seconds, lines) and
// the process fields; readable times to the second, exact values in JSON and copies.
import { useState } from "preact/hooks";

import { Body, mount } from "../shared/app";
import { Outcome, ProcessFields, type ProcessInfo } from "../shared/process";
import { Copy, Empty, Filter, Time, Toggle, find, matches } from "../shared/ui";

interface Entry {
  timestamp: string;
  stream: "stdin" | "stdout" | "stderr";
  text: string;
  start_line: number;
  end_line: number;
}
interface Details {
  process: ProcessInfo;
  transcript: Entry[];
  lines: [number, number] | null;
}

const span = (a: number, b: number) => (a === b ? `line ${a}` : `lines ${a}–${b}`);

function Transcript({ details }: { details: Details }) {
  const [query, setQuery] = useState("");
  const [wrap, setWrap] = useState(true);
  const [hidden, setHidden] = useState<string[]>([]);
  const started = Date.parse(details.process.status.started);
  const shown = details.transcript.filter((e) => !hidden.includes(e.stream) && matches(query, e.text));
  const streams = [...new Set(details.transcript.map((e) => e.stream))];
  return (
    <Body
      bar={
        <>
          <Filter value={query} onInput={setQuery} placeholder="Filter transcript" />
          {streams.map((s) => (
            <Toggle on={!hidden.includes(s)} set={(on) => setHidden(on ? hidden.filter((h) => h !== s) : [...hidden, s])}>
              {s}
            </Toggle>
          ))}
          <Toggle on={wrap} set={setWrap}>Wrap lines</Toggle>
          {details.lines && <span>{span(details.lines[0], details.lines[1])}</span>}
        </>
      }
    >
      {shown.length === 0 && (
        <Empty>{details.transcript.length ? "No matching fragments." : "No transcript entries in the selected range."}</Empty>
      )}
      {shown.map((e, i) => (
        <div class="entry item" key={i}>
          <div class="sub">
            <span class={`stream-${e.stream}`}>{e.stream}</span> · <Time iso={e.timestamp} /> ·{" "}
            <span title={`${(Date.parse(e.timestamp) - started) / 1000} s after the start`}>
              +{((Date.parse(e.timestamp) - started) / 1000).toFixed(3)} s
            </span>{" "}
            · {span(e.start_line, e.end_line)}
            <Copy text={e.text} title="Copy fragment" />
          </div>
          <pre style={wrap ? undefined : "white-space:pre;overflow-x:auto"}>{find(e.text.replace(/\n$/, ""), query)}</pre>
        </div>
      ))}
    </Body>
  );
}

mount<Details>({
  name: "process-details",
  view: (details) => ({
    title: `Process ${details.process.summary.process_id}: ${details.process.summary.executable}`,
    status: <Outcome info={details.process} />,
    tabs: [
      { id: "transcript", label: "Transcript", view: () => <Transcript details={details} /> },
      { id: "process", label: "Process", view: () => <Body><ProcessFields info={details.process} /></Body> },
    ],
  }),
});
