// cmake_build: one card per profile or build preset with its configuration, step counts and the
// compiler and linker diagnostics of its transcript (errors first, compiler-style lines).
import { mount } from "../shared/app";
import { executionsView, type Execution } from "../shared/cmake";
import { Fields } from "../shared/ui";

interface Diagnostic {
  path: string | null;
  line: number | null;
  column: number | null;
  severity: "error" | "warning" | "note";
  message: string;
  code: string | null;
  target: string | null;
}

interface Build extends Execution {
  configuration: string | null;
  completed_steps: number | null;
  total_steps: number | null;
  diagnostics?: Diagnostic[];
}

const shown = (n: number | null) => (n === null ? "Unknown" : String(n));
// As in the text result: a build that reported no steps at all (failed early, or nothing to do).
const steps = (done: number | null, total: number | null, failed: boolean) =>
  done === null && total === null
    ? "Unknown"
    : `${shown(done)} of ${shown(total)} finished${failed ? " before the failure" : ""}`;

const order = { error: 0, warning: 1, note: 2 };
const location = (d: Diagnostic) =>
  d.path === null ? "" : [d.path, d.line, d.column].filter((p) => p !== null).join(":") + ": ";
const colors = { error: "var(--color-text-danger, #c62828)", warning: "var(--color-text-warning, #a66300)", note: "inherit" };

function Diagnostics({ items }: { items: Diagnostic[] }) {
  if (items.length === 0) return null;
  const sorted = [...items].sort((a, b) => order[a.severity] - order[b.severity]);
  const count = (s: Diagnostic["severity"]) => items.filter((d) => d.severity === s).length;
  return (
    <details open={count("error") > 0}>
      <summary>
        Diagnostics: {count("error")} errors; {count("warning")} warnings; {count("note")} notes
      </summary>
      <ul style="list-style:none;padding:0;margin:4px 0;font-family:var(--font-mono, monospace);font-size:12px">
        {sorted.slice(0, 50).map((d) => (
          <li style="white-space:pre-wrap;overflow-wrap:anywhere">
            {location(d)}
            <span style={`color:${colors[d.severity]}`}>{d.severity}</span>: {d.message}
            {d.code ? ` [${d.code}]` : ""}
            {d.target ? ` (target ${d.target})` : ""}
          </li>
        ))}
        {sorted.length > 50 ? <li>…and {sorted.length - 50} more</li> : null}
      </ul>
    </details>
  );
}

mount<{ result: Build[] }>({
  name: "cmake-build",
  view: ({ result }) =>
    executionsView("Build", result, (e) => (
      <>
        <Fields
          rows={[
            ["Configuration", e.configuration ?? "Not specified"],
            ["Steps", steps(e.completed_steps, e.total_steps, e.error !== null)],
          ]}
        />
        {e.completed_steps !== null && e.total_steps ? (
          <progress max={e.total_steps} value={e.completed_steps} style="width:100%;height:6px" />
        ) : null}
        <Diagnostics items={e.diagnostics ?? []} />
      </>
    )),
});
