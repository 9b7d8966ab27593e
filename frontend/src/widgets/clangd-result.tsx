// The seven clangd tools share this view; the answer's shape tells them apart. Severity cards for
// diagnostics, rendered hover contents, locations grouped by file with the saved excerpt of the
// selected one, a collapsible document outline, and workspace symbols with kind and scope.
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";

import { Body, mount, type Input } from "../shared/app";
import { cppLines } from "../shared/cpp";
import { Code, Copy, Empty, Fields, Filter, Toggle, find, matches, plural, splitLines } from "../shared/ui";

interface Position { line: number; character: number }
interface Range { start: Position; end: Position }
interface Preview { start_line: number; text: string }
interface Location { path: string; range: Range; preview?: Preview | null }
interface Context { id: string; toolset_id: string; build_directory: string; compilation_database: string }
interface Diagnostic {
  range: Range;
  severity: "error" | "warning" | "information" | "hint" | null;
  message: string;
  code: number | string | null;
  source: string | null;
  tags: number[];
  related: { location: Location; message: string }[];
}
interface HoverPart { kind: "plaintext" | "markdown" | "code"; text: string; language: string | null }
interface DocumentSymbol { name: string; kind: number; range: Range; selection_range: Range; detail: string | null; children: DocumentSymbol[] }
interface WorkspaceSymbol { name: string; kind: number; location: Location; container_name: string | null }
interface Answer {
  configurations?: string[];
  path?: string;
  position?: Position;
  diagnostics?: Diagnostic[];
  hover?: { contents: HoverPart[]; range: Range | null } | null;
  locations?: Location[];
  symbols?: (DocumentSymbol | WorkspaceSymbol)[];
  omitted?: number;
  index_busy?: boolean;
}

const KINDS = ("File Module Namespace Package Class Method Property Field Constructor Enum Interface Function Variable " +
  "Constant String Number Boolean Array Object Key Null EnumMember Struct Event Operator TypeParameter").split(" ");
const kindName = (k: number) => KINDS[k - 1] ?? `unknown kind (${k})`;
const at = (p: Position) => `line ${p.line}, character ${p.character}`;
const range = (r: Range) => `${at(r.start)} to ${at(r.end)}`;
const cpp = (text: string) => cppLines(splitLines(text));

/** The saved excerpt of a location, its own lines marked. */
function Excerpt({ location }: { location: Location }) {
  if (!location.preview) return <div class="sub">Source preview unavailable.</div>;
  const { start_line, text } = location.preview;
  const lines = cpp(text).map((body, i) => {
    const n = start_line + i;
    return { n, body, cls: n >= location.range.start.line && n <= location.range.end.line ? "sel" : "" };
  });
  return <Code lines={lines} wrap />;
}

function Locations({ locations, label }: { locations: Location[]; label?: (l: Location) => ComponentChildren }) {
  const [selected, setSelected] = useState<Location | null>(locations[0] ?? null);
  const groups = new Map<string, Location[]>();
  for (const l of locations) groups.set(l.path, [...(groups.get(l.path) ?? []), l]);
  if (!locations.length) return <Empty>No locations found.</Empty>;
  return (
    <>
      {[...groups].map(([path, items]) => (
        <details open key={path}>
          <summary class="item mono">
            {path} <span class="muted">({items.length})</span> <Copy text={path} title="Copy path" />
          </summary>
          {items.map((l, i) => (
            <div key={i} style="padding-left:1.1em">
              <button class="link location" onClick={() => setSelected(l)}>
                {label ? label(l) : range(l.range)}
              </button>
              {l === selected && <Excerpt location={l} />}
            </div>
          ))}
        </details>
      ))}
    </>
  );
}

function Diagnostics({ items, query }: { items: Diagnostic[]; query: string }) {
  const shown = items.filter((d) => matches(query, d.message, d.severity, d.source, String(d.code ?? "")));
  if (!items.length) return <Empty>No diagnostics reported.</Empty>;
  return (
    <>
      {shown.map((d, i) => (
        <section key={i} class={`card diag sev-${d.severity ?? "information"}`}>
          <h2>
            <span class="pill">{d.severity ?? "diagnostic"}</span>
            <span class="muted">{range(d.range)}</span>
            <span class="muted">{[d.source, d.code].filter((x) => x !== null).join(" ")}</span>
          </h2>
          <div class="msg v">{find(d.message, query)}</div>
          {d.related.map((r, j) => (
            <div class="sub" key={j}>
              Note at {r.location.path}, {range(r.location.range)}: {r.message}
            </div>
          ))}
        </section>
      ))}
    </>
  );
}

const inline = (text: string) =>
  text.split(/(`[^`]+`)/).map((s) => (s.startsWith("`") && s.length > 1 ? <code>{s.slice(1, -1)}</code> : s));

/** Markdown subset: fenced code (C/C++ colors), headings, rules, inline code, lines; no HTML. */
function Markdown({ text }: { text: string }) {
  const blocks = text.split(/^```(\w*)\n([\s\S]*?)^```\s*$/m);
  const out: ComponentChildren[] = [];
  for (let i = 0; i < blocks.length; i += 3) {
    for (const line of blocks[i].split("\n").filter((l) => l.trim())) {
      if (/^\s*([-*_])\1{2,}\s*$/.test(line)) out.push(<hr />);
      else {
        const heading = /^#{1,6}\s+/.exec(line);
        const body = inline(heading ? line.slice(heading[0].length) : line);
        out.push(<p>{heading ? <b>{body}</b> : body}</p>);
      }
    }
    if (i + 2 < blocks.length) out.push(<pre>{cpp(blocks[i + 2]).map((line) => <>{line}{"\n"}</>)}</pre>);
  }
  return <div class="md v">{out}</div>;
}

function Outline({ symbols, query }: { symbols: DocumentSymbol[]; query: string }) {
  return (
    <ul class="tree">
      {symbols
        .filter((s) => matches(query, s.name) || s.children.length)
        .map((s, i) => {
          const label = (
            <span>
              <span class="muted">{kindName(s.kind)}</span> <b>{find(s.name, query)}</b>
              {s.detail && <span class="mono muted"> {s.detail}</span>}{" "}
              <span class="sub">lines {s.range.start.line}–{s.range.end.line}</span>
            </span>
          );
          return (
            <li key={i}>
              {s.children.length ? (
                <details open>
                  <summary>{label}</summary>
                  <Outline symbols={s.children} query={query} />
                </details>
              ) : (
                <div style="padding-left:1.1em">{label}</div>
              )}
            </li>
          );
        })}
    </ul>
  );
}

function Answers({ answers, kind }: { answers: Answer[]; kind: string }) {
  const [query, setQuery] = useState("");
  const [errorsOnly, setErrorsOnly] = useState(false);
  const filterable = kind !== "hover";
  return (
    <Body
      bar={
        filterable && (
          <>
            <Filter value={query} onInput={setQuery} />
            {kind === "diagnostics" && <Toggle on={errorsOnly} set={setErrorsOnly}>Errors only</Toggle>}
          </>
        )
      }
    >
      {answers.length === 0 && <Empty>No answers.</Empty>}
      {answers.map((a, i) => (
        <section key={i} class="answer">
          {a.configurations && <div class="sub">Configurations: {a.configurations.join(", ")}</div>}
          {kind === "diagnostics" && (
            <Diagnostics items={(a.diagnostics ?? []).filter((d) => !errorsOnly || d.severity === "error")} query={query} />
          )}
          {kind === "hover" &&
            (a.hover ? (
              a.hover.contents.map((part, j) =>
                part.kind === "markdown" ? <Markdown key={j} text={part.text} /> : <pre key={j}>{part.kind === "code" ? cpp(part.text).map((l) => <>{l}{"\n"}</>) : part.text}</pre>,
              )
            ) : (
              <Empty>No hover information available.</Empty>
            ))}
          {kind === "locations" && <Locations locations={(a.locations ?? []).filter((l) => matches(query, l.path, l.preview?.text))} />}
          {kind === "outline" &&
            ((a.symbols ?? []).length ? <Outline symbols={a.symbols as DocumentSymbol[]} query={query} /> : <Empty>No document symbols found.</Empty>)}
          {kind === "symbols" &&
            ((a.symbols ?? []).length ? (
              <Locations
                locations={(a.symbols as WorkspaceSymbol[]).filter((s) => matches(query, s.name, s.container_name)).map((s) => ({ ...s.location, symbol: s }))}
                label={(l) => {
                  const s = (l as Location & { symbol: WorkspaceSymbol }).symbol;
                  return (
                    <>
                      <span class="muted">{kindName(s.kind)}</span> <b>{find(s.name, query)}</b>
                      {s.container_name && <span class="muted"> · Scope: {s.container_name}</span>} · line {l.range.start.line}
                    </>
                  );
                }}
              />
            ) : (
              <Empty>No workspace symbols found.</Empty>
            ))}
          {a.omitted ? <div class="sub">…and {a.omitted} more not shown; pass a larger limit.</div> : null}
          {a.index_busy && (
            <div class="sub">clangd's index was still busy: files it had not indexed yet are missing from this answer.</div>
          )}
        </section>
      ))}
    </Body>
  );
}

function Contexts({ contexts }: { contexts: Context[] }) {
  if (!contexts.length) return <Body><Empty>No clangd configurations are available.</Empty></Body>;
  return (
    <Body>
      {contexts.map((c) => (
        <section class="card" key={c.id}>
          <h2 class="item">
            {c.id} <Copy text={c.id} title="Copy configuration id" />
          </h2>
          <Fields
            rows={[
              ["Toolset", c.toolset_id],
              ["Build directory", c.build_directory, c.build_directory],
              ["Compilation database", c.compilation_database, c.compilation_database],
            ]}
          />
        </section>
      ))}
    </Body>
  );
}

function classify(first: Answer | Context | undefined, input: Input): [string, string] {
  if (!first) return typeof input.query === "string" ? ["symbols", "Workspace symbols"] : ["empty", "Clangd"];
  if ("compilation_database" in first) return ["contexts", "Clangd configurations"];
  if ("diagnostics" in first) return ["diagnostics", `Diagnostics for ${first.path}`];
  if ("hover" in first) return ["hover", `Hover at ${first.path}, ${at(first.position!)}`];
  if ("locations" in first) return ["locations", "include_declaration" in input ? "References" : "Locations"];
  if ("path" in first) return ["outline", `Document symbols of ${first.path}`];
  return ["symbols", `Workspace symbols${typeof input.query === "string" ? ` for "${input.query}"` : ""}`];
}

mount<{ result: (Answer | Context)[] }>({
  name: "clangd-result",
  view: ({ result }, input) => {
    const [kind, title] = classify(result[0], input);
    const diagnostics = result.flatMap((a) => ("diagnostics" in a ? (a.diagnostics ?? []) : []));
    const errors = diagnostics.filter((d) => d.severity === "error").length;
    return {
      title,
      status:
        kind === "diagnostics" ? (
          <span class={`pill ${errors ? "bad" : diagnostics.length ? "warn" : "ok"}`}>{plural(diagnostics.length, "diagnostic")}</span>
        ) : (
          <span class="pill muted">{plural(result.length, kind === "contexts" ? "configuration" : "answer")}</span>
        ),
      tabs: [
        {
          id: "result",
          label: "Result",
          view: () => (kind === "contexts" ? <Contexts contexts={result as Context[]} /> : <Answers answers={result as Answer[]} kind={kind} />),
        },
      ],
    };
  },
});
