// The `resources.clangd` document of a Workspace read/write/edit: per configuration, semantic tokens
// (LSP's compact relative encoding in code points and one-based lines, with a legend per entry) and
// diagnostics with absolute positions, turned into line decorations for a source view (diagnostic
// decorations carry their diagnostic for the hover panel).
import { useState } from "preact/hooks";

import type { Deco, SourceRange } from "./decorate";
import { rangeDecos } from "./decorate";
import type { Diagnostic } from "./diagnostics";

export interface ClangdDocument {
  version: number;
  files: {
    path: string;
    diagnostics: { configurations: string[]; diagnostics: Diagnostic[] }[];
    highlighting: Highlighting[];
  }[];
}

/** One highlighting entry: five integers per token (line delta, start, length, type, modifier bits). */
export interface Highlighting {
  configurations: string[];
  legend: { types: string[]; modifiers: string[] };
  tokens: number[];
}

export interface Span {
  range: SourceRange;
  kind: string;
  modifiers: string[];
}

/** Decodes the relative tokens of one entry into absolute spans. */
export function decodeTokens(group: Highlighting): Span[] {
  const out: Span[] = [];
  let line = 1;
  let start = 0;
  const t = group.tokens;
  for (let i = 0; i + 4 < t.length; i += 5) {
    if (t[i] > 0) {
      line += t[i];
      start = t[i + 1];
    } else {
      start += t[i + 1];
    }
    const bits = t[i + 4];
    const modifiers = group.legend.modifiers.filter((_, bit) => bit < 32 && (bits >>> bit) & 1);
    out.push({
      range: { start: { line, character: start }, end: { line, character: start + t[i + 2] } },
      kind: group.legend.types[t[i + 3]] ?? "type-" + t[i + 3],
      modifiers,
    });
  }
  return out;
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
    for (const span of decodeTokens(group)) {
      const cls = ["sem-" + span.kind, ...span.modifiers.map((m) => "mod-" + m)].join(" ");
      add(rangeDecos(span.range, first, lines, cls));
    }
  }
  let diagnostics = 0;
  for (const group of file.diagnostics.filter((g) => g.configurations.includes(configuration))) {
    for (const d of group.diagnostics) {
      diagnostics++;
      add(rangeDecos(d.range, first, lines, `dg dg-${d.severity ?? "information"}`, d));
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
