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

/** Consecutive entries of one stream: they share one header. */
export function runs(entries: Entry[]): Entry[][] {
  const res: Entry[][] = [];
  for (const entry of entries) {
    const run = res[res.length - 1];
    if (run && run[0].stream === entry.stream) run.push(entry);
    else res.push([entry]);
  }
  return res;
}

/** Compiler, linker, Ninja and CMake error lines. */
export const ERROR_LINE = /^FAILED:|\berror:|^CMake Error|^\*\*\*.*Error|\bfatal error\b|\bundefined reference\b/;

/** The lines of one fragment, error lines highlighted. */
function lines(text: string, query: string) {
  return text
    .replace(/\n$/, "")
    .split("\n")
    .map((line) => (
      <>
        {ERROR_LINE.test(line) ? <span class="error-line">{find(line, query)}</span> : find(line, query)}
        {"\n"}
      </>
    ));
}

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
      {runs(shown).map((run, i) => {
        const first = run[0];
        const last = run[run.length - 1];
        const text = run.map((e) => e.text).join("");
        return (
          <div class="entry item" key={i} data-stream={first.stream}>
            <div class="sub">
              <span class={`stream-${first.stream}`}>{first.stream}</span> · <Time iso={first.timestamp} /> ·{" "}
              <span title={`${(Date.parse(first.timestamp) - started) / 1000} s after the start`}>
                +{((Date.parse(first.timestamp) - started) / 1000).toFixed(3)} s
              </span>{" "}
              · {span(first.start_line, last.end_line)}
              <Copy text={text} title="Copy fragment" />
            </div>
            <pre style={wrap ? undefined : "white-space:pre;overflow-x:auto"}>
              {run.map((e) => (
                <span title={e.timestamp}>{lines(e.text, query)}</span>
              ))}
            </pre>
          </div>
        );
      })}
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
