// Line decorations in Unicode code points ([start, end)): lexical and semantic colors, diagnostic
// underlines carrying their diagnostics for the hover panel. Overlapping decorations combine their
// classes and diagnostics.
import type { ComponentChildren } from "preact";

import { Underline, type Diagnostic } from "./diagnostics";

export interface Deco {
  start: number;
  end: number;
  cls: string;
  diagnostic?: Diagnostic;
}

export function decorate(text: string, decos: Deco[], rest: (part: string) => ComponentChildren): ComponentChildren {
  if (!decos.length) return rest(text);
  const points = Array.from(text);
  const cuts = [...new Set([0, points.length, ...decos.flatMap((d) => [d.start, d.end])])]
    .filter((c) => c >= 0 && c <= points.length)
    .sort((a, b) => a - b);
  const out: ComponentChildren[] = [];
  for (let i = 0; i + 1 < cuts.length; i++) {
    const [a, b] = [cuts[i], cuts[i + 1]];
    const part = points.slice(a, b).join("");
    const over = decos.filter((d) => d.start <= a && d.end >= b);
    const cls = over.map((d) => d.cls).join(" ");
    const diagnostics = over.flatMap((d) => d.diagnostic ?? []);
    if (!over.length) out.push(rest(part));
    else if (diagnostics.length) out.push(<Underline cls={cls} list={diagnostics}>{rest(part)}</Underline>);
    else out.push(<span class={cls}>{rest(part)}</span>);
  }
  return out;
}

interface Position { line: number; character: number }
export interface SourceRange { start: Position; end: Position }

/** Splits an absolute range into per-line decorations for lines `first`…`first + count - 1`. */
export function rangeDecos(range: SourceRange, first: number, lines: string[], cls: string, diagnostic?: Diagnostic) {
  const out: [number, Deco][] = [];
  for (let line = Math.max(range.start.line, first); line <= Math.min(range.end.line, first + lines.length - 1); line++) {
    const length = Array.from(lines[line - first]).length;
    const start = line === range.start.line ? range.start.character : 0;
    let end = line === range.end.line ? range.end.character : length;
    if (end <= start) end = start + 1; // keep zero-width diagnostics visible
    out.push([line - first, { start, end, cls, diagnostic }]);
  }
  return out;
}
