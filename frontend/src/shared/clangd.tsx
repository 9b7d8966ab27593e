// The `resources.clangd` document of a Workspace read/write/edit: per configuration, semantic token
// spans and diagnostics with absolute positions, turned into line decorations for a source view.
import { useState } from "preact/hooks";

import type { Deco, SourceRange } from "./decorate";
import { rangeDecos } from "./decorate";

interface Diagnostic {
  range: SourceRange;
  severity: string | null;
  message: string;
  source: string | null;
  code: number | string | null;
  related: { location: { path: string; range: SourceRange }; message: string }[];
}
export interface ClangdDocument {
  version: number;
  files: {
    path: string;
    diagnostics: { configurations: string[]; diagnostics: Diagnostic[] }[];
    highlighting: { configurations: string[]; spans: { range: SourceRange; kind: string; modifiers: string[] }[] }[];
  }[];
}

const where = (r: SourceRange) => `line ${r.start.line}, character ${r.start.character}`;

function hover(d: Diagnostic) {
  const origin = [d.source, d.code].filter((x) => x !== null).join(" ");
  const notes = d.related.map((r) => `Note at ${r.location.path}, ${where(r.location.range)}: ${r.message}`);
  return [`${d.severity ?? "diagnostic"}${origin ? ` (${origin})` : ""}: ${d.message}`, ...notes].join("\n");
}

/** The configurations of `path` in the document, and a selector state. */
export function useConfiguration(doc: ClangdDocument | undefined, path: string) {
  const file = doc?.files.find((f) => f.path === path) ?? doc?.files[0];
  const groups = [...(file?.highlighting ?? []), ...(file?.diagnostics ?? [])];
  const configurations = [...new Set(groups.flatMap((g) => g.configurations))];
  const [selected, setSelected] = useState<string | null>(null);
  const current = selected ?? configurations[0] ?? null;
  return { file, configurations, current, setSelected };
}

/** Semantic and diagnostic decorations of `lines` (absolute numbers from `first`) for one configuration. */
export function clangdDecos(file: ClangdDocument["files"][number] | undefined, configuration: string | null, first: number, lines: string[]) {
  const out: Deco[][] = lines.map(() => []);
  if (!file || configuration === null) return { decos: out, diagnostics: 0 };
  const add = (pairs: [number, Deco][]) => pairs.forEach(([i, d]) => out[i].push(d));
  for (const group of file.highlighting.filter((g) => g.configurations.includes(configuration))) {
    for (const span of group.spans) {
      const cls = ["sem-" + span.kind, ...span.modifiers.map((m) => "mod-" + m)].join(" ");
      add(rangeDecos(span.range, first, lines, cls));
    }
  }
  let diagnostics = 0;
  for (const group of file.diagnostics.filter((g) => g.configurations.includes(configuration))) {
    for (const d of group.diagnostics) {
      diagnostics++;
      add(rangeDecos(d.range, first, lines, `dg dg-${d.severity ?? "information"}`, hover(d)));
    }
  }
  return { decos: out, diagnostics };
}

export function ConfigurationSelect({ configurations, current, set }: { configurations: string[]; current: string | null; set: (c: string) => void }) {
  if (configurations.length === 0) return null;
  return (
    <select aria-label="Configuration" value={current ?? ""} onChange={(e) => set((e.currentTarget as HTMLSelectElement).value)}>
      {configurations.map((c) => (
        <option value={c}>{c}</option>
      ))}
    </select>
  );
}
