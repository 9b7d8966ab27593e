// quality_tidy: clang-tidy diagnostics grouped by file (with the configurations that agree), each
// with its check name and fix-it previews (the replaced text and its replacement); what the budget
// left out, files changed by `apply_fixes` with their diffs' links, and failed runs.
import { useState } from "preact/hooks";

import { Body, mount } from "../shared/app";
import { cppLines } from "../shared/cpp";
import { Failures, FileDiff, type Failure } from "../shared/quality";
import { type Links } from "../shared/resources";
import { Code, Copy, Empty, Fields, Filter, Toggle, find, matches, plural, splitLines } from "../shared/ui";

interface Position { line: number; character: number }
interface Range { start: Position; end: Position }
interface Fix { path: string; range: Range; old_text: string; new_text: string }
interface Diagnostic {
  range: Range;
  severity: "error" | "warning" | "information" | "hint" | null;
  message: string;
  code: string | number | null;
  source: string | null;
  related: { location: { path: string; range: Range }; message: string }[];
  fixes: Fix[];
}
interface TidyFile { configurations: string[]; path: string; diagnostics: Diagnostic[] }
interface Changed { path: string; replacements: number; resources: Links }
interface Result {
  path: string;
  configurations: string[];
  files_total: number;
  files_checked: number;
  files: TidyFile[];
  more_diagnostics: number;
  changed: Changed[];
  failures: Failure[];
}

const at = (p: Position) => `line ${p.line}, character ${p.character}`;
const range = (r: Range) => `${at(r.start)} to ${at(r.end)}`;

/** The replaced text and its replacement, in C/C++ colors. */
function FixPreview({ fix, file }: { fix: Fix; file: string }) {
  const lines = [
    ...cppLines(splitLines(fix.old_text || " ")).map((body) => ({ n: "-", body, cls: "del" })),
    ...cppLines(splitLines(fix.new_text || " ")).map((body) => ({ n: "+", body, cls: "add" })),
  ];
  return (
    <div class="fix">
      <div class="sub">
        Fix-it at {fix.path === file ? "" : `${fix.path}, `}{range(fix.range)}
      </div>
      <Code lines={lines} wrap />
    </div>
  );
}

function Diagnostics({ result }: { result: Result }) {
  const [query, setQuery] = useState("");
  const [fixable, setFixable] = useState(false);
  const shown = (d: Diagnostic) =>
    (!fixable || d.fixes.length > 0) && matches(query, d.message, String(d.code ?? ""), d.severity);
  const listed = result.files.reduce((n, f) => n + f.diagnostics.length, 0);
  return (
    <Body
      bar={
        <>
          <span class="grow">
            {plural(listed, "diagnostic")} in {plural(result.files.length, "file entry", "file entries")}
            {result.more_diagnostics > 0 && `; ${result.more_diagnostics} more not listed`}
          </span>
          <Filter value={query} onInput={setQuery} />
          <Toggle on={fixable} set={setFixable}>With fix-its</Toggle>
        </>
      }
    >
      {result.files.length === 0 && <Empty>No diagnostics reported.</Empty>}
      {result.files.map((file, i) => {
        const items = file.diagnostics.filter(shown);
        return (
          <details open key={i}>
            <summary class="item mono">
              {file.path} <span class="muted">({items.length})</span> <Copy text={file.path} title="Copy path" />
              <span class="sub"> Configurations: {file.configurations.join(", ")}</span>
            </summary>
            {items.map((d, j) => (
              <section key={j} class={`card diag sev-${d.severity ?? "information"}`}>
                <h2>
                  <span class="pill">{d.severity ?? "diagnostic"}</span>
                  <span class="muted">{range(d.range)}</span>
                  <span class="mono">{find(String(d.code ?? ""), query)}</span>
                </h2>
                <div class="msg v">{find(d.message, query)}</div>
                {d.related.map((r, k) => (
                  <div class="sub" key={k}>
                    Note at {r.location.path}, {range(r.location.range)}: {r.message}
                  </div>
                ))}
                {d.fixes.map((fix, k) => <FixPreview key={k} fix={fix} file={file.path} />)}
              </section>
            ))}
          </details>
        );
      })}
    </Body>
  );
}

function Runs({ result }: { result: Result }) {
  const unchecked = result.files_total - result.files_checked;
  return (
    <Body>
      <Fields
        rows={[
          ["Path", result.path, result.path],
          ["Configurations", result.configurations.join(", ")],
          ["Translation units", `${result.files_checked} of ${result.files_total} checked`],
          ["Not checked", unchecked ? `${plural(unchecked, "file")}: the diagnostics budget was reached` : "None"],
          ["More diagnostics", String(result.more_diagnostics)],
        ]}
      />
      {result.changed.map((c, i) => (
        <section class="card" key={`c${i}`}>
          <h2 class="item">
            Changed {c.path} <Copy text={c.path} title="Copy path" />
          </h2>
          <div class="sub">{plural(c.replacements, "fix-it replacement")} applied.</div>
          <FileDiff uri={c.resources.diff?.uri} highlight wrap={false} query="" />
        </section>
      ))}
      <Failures failures={result.failures} />
    </Body>
  );
}

mount<Result>({
  name: "quality-tidy",
  view: (result) => {
    const diagnostics = result.files.flatMap((f) => f.diagnostics);
    const errors = diagnostics.filter((d) => d.severity === "error").length + result.failures.length;
    return {
      title: `clang-tidy on ${result.path}`,
      status: (
        <span class={`pill ${errors ? "bad" : diagnostics.length ? "warn" : "ok"}`}>
          {plural(diagnostics.length + result.more_diagnostics, "diagnostic")}
        </span>
      ),
      tabs: [
        { id: "diagnostics", label: "Diagnostics", view: () => <Diagnostics result={result} /> },
        { id: "runs", label: result.changed.length ? "Changes" : "Runs", view: () => <Runs result={result} /> },
      ],
    };
  },
});
