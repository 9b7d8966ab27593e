// What the quality widgets share: one file's `diff.json` (the `diff` resource a change links) as
// numbered lines (before and after line numbers, -/+ marks, changed substrings, C/C++ colors; a
// failed read stays inside that file's section), and the cards of runs that failed.
import { cppDecos, isCpp } from "./cpp";
import { decorate } from "./decorate";
import { useResource } from "./resources";
import { Code, Empty, find, type CodeLine } from "./ui";

interface DiffJson {
  path: string;
  hunks: {
    lines: {
      kind: "context" | "added" | "removed";
      before_line: number | null;
      after_line: number | null;
      text: string;
      spans: [number, number][];
    }[];
  }[];
}

const SIGN = { context: " ", added: "+", removed: "-" } as const;
const ROW = { context: "", added: "add", removed: "del" } as const;

/** The code lines of a parsed diff; hunks are separated by a gap row. */
export function diffRows(diff: DiffJson, highlight: boolean, query: string): CodeLine[] {
  const numbers = diff.hunks.flatMap((h) => h.lines.flatMap((l) => [l.before_line ?? 0, l.after_line ?? 0]));
  const width = String(Math.max(0, ...numbers)).length;
  const column = (n: number | null) => (n === null ? " ".repeat(width) : String(n).padStart(width));
  const rows: CodeLine[] = [];
  for (const [idx, hunk] of diff.hunks.entries()) {
    if (idx > 0) rows.push({ n: null, body: "⋯", cls: "gap" });
    for (const line of hunk.lines) {
      const body = line.text.replace(/\r?\n$/, "");
      const marks = highlight ? line.spans.map(([start, end]) => ({ start, end, cls: "chg" })) : [];
      const colors = isCpp(diff.path) ? cppDecos([body])[0] : [];
      rows.push({
        n: `${column(line.before_line)} ${column(line.after_line)} ${SIGN[line.kind]}`,
        body: decorate(body, [...marks, ...colors], (part) => find(part, query)),
        cls: ROW[line.kind],
      });
    }
  }
  return rows;
}

/** Loads and shows the diff at `uri`. */
export function FileDiff({ uri, highlight, wrap, query }: { uri: string | undefined; highlight: boolean; wrap: boolean; query: string }) {
  const { text, error } = useResource(uri);
  if (!uri) return <Empty>No diff is linked for this file.</Empty>;
  if (error) return <div class="err">The diff is not available: {error}</div>;
  if (text === undefined) return <Empty>Loading…</Empty>;
  let diff: DiffJson;
  try {
    diff = JSON.parse(text) as DiffJson;
  } catch {
    return <div class="err">The diff is not valid JSON.</div>;
  }
  const rows = diffRows(diff, highlight, query);
  return rows.length ? <Code lines={rows} wrap={wrap} /> : <Empty>No changes.</Empty>;
}

export interface Failure { path: string; configuration: string | null; error: string; process_id: number | null }

/** One card per failed run: the file, its configuration and process, and the error. */
export function Failures({ failures }: { failures: Failure[] }) {
  return (
    <>
      {failures.map((f, i) => (
        <section class="card diag sev-error" key={i}>
          <h2>
            <span class="pill bad">failed</span> <span class="mono">{f.path}</span>
            {f.configuration && <span class="muted">{f.configuration}</span>}
            {f.process_id !== null && <span class="muted">process {f.process_id}</span>}
          </h2>
          <div class="msg v">{f.error}</div>
        </section>
      ))}
    </>
  );
}
