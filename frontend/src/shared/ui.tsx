// Shared components: copy icons, field tables, syntax-colored JSON, filters, toggles, code lines,
// highlighted spans, and the formatters for times and sizes.
import type { ComponentChildren, VNode } from "preact";
import { useState } from "preact/hooks";

// ---------------------------------------------------------------------------------------------
// Clipboard: the async API first, then a selected hidden textarea (works without clipboard-write).

export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = document.createElement("textarea");
    area.value = text;
    area.style.cssText = "position:fixed;opacity:0;top:0;left:0";
    document.body.append(area);
    area.select();
    const ok = document.execCommand("copy");
    area.remove();
    return ok;
  }
}

const COPY_ICON = "M5 5V2.5h8.5V11H11M2.5 5H11v8.5H2.5z";
const DONE_ICON = "M3 8.5l3 3 7-7";

export function Copy({ text, title = "Copy" }: { text: string | (() => string); title?: string }) {
  const [done, setDone] = useState(false);
  const onClick = async (event: Event) => {
    event.stopPropagation();
    if (await copyText(typeof text === "function" ? text() : text)) {
      setDone(true);
      setTimeout(() => setDone(false), 1200);
    }
  };
  return (
    <button class="icon copy" title={title} aria-label={title} data-copied={done ? "" : undefined} onClick={onClick}>
      <svg width="13" height="13" viewBox="0 0 16 16" fill="none" stroke="currentColor" stroke-width="1.4">
        <path d={done ? DONE_ICON : COPY_ICON} />
      </svg>
    </button>
  );
}

// ---------------------------------------------------------------------------------------------
// Field tables: label, value (wraps, selectable), optional copy icon with the exact value.

export type FieldRow = [label: string, value: ComponentChildren, copy?: string];

export function Fields({ rows }: { rows: FieldRow[] }) {
  return (
    <table class="fields">
      <tbody>
        {rows.map(([label, value, copy]) => (
          <tr key={label}>
            <th>{label}</th>
            <td>
              {value}
              {copy !== undefined && <Copy text={copy} title={`Copy ${label.toLowerCase()}`} />}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

// ---------------------------------------------------------------------------------------------
// JSON: colored tokens; plain text above a size limit so switching tabs stays responsive.

const JSON_TOKEN = /("(?:[^"\\]|\\.)*")(\s*:)?|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)|(true|false|null)/g;
const PLAIN_JSON_LIMIT = 200_000;

export function JsonView({ value }: { value: unknown }) {
  const text = JSON.stringify(value, null, 2) ?? "null";
  if (text.length > PLAIN_JSON_LIMIT) return <pre class="json">{text}</pre>;
  const out: (string | VNode)[] = [];
  let last = 0;
  for (const m of text.matchAll(JSON_TOKEN)) {
    out.push(text.slice(last, m.index));
    const cls = m[1] ? (m[2] ? "j-k" : "j-s") : m[3] ? "j-n" : "j-l";
    out.push(<span class={cls}>{m[1] ?? m[0]}</span>);
    if (m[2]) out.push(m[2]);
    last = m.index + m[0].length;
  }
  out.push(text.slice(last));
  return <pre class="json">{out}</pre>;
}

// ---------------------------------------------------------------------------------------------
// Small controls.

export function Filter({ value, onInput, placeholder = "Filter" }: {
  value: string;
  onInput: (value: string) => void;
  placeholder?: string;
}) {
  return (
    <input
      type="search"
      value={value}
      placeholder={placeholder}
      aria-label={placeholder}
      onInput={(e) => onInput((e.currentTarget as HTMLInputElement).value)}
    />
  );
}

export function Toggle({ on, set, children }: { on: boolean; set: (on: boolean) => void; children: ComponentChildren }) {
  return (
    <button aria-pressed={on ? "true" : "false"} onClick={() => set(!on)}>
      {children}
    </button>
  );
}

export const Empty = ({ children }: { children: ComponentChildren }) => <div class="empty">{children}</div>;

/** Case-insensitive substring test used by every local filter. */
export const matches = (query: string, ...values: (string | null | undefined)[]) =>
  !query || values.some((v) => v?.toLowerCase().includes(query.toLowerCase()));

/** `text` with every case-insensitive occurrence of `query` marked in the local-search color. */
export function find(text: string, query: string): ComponentChildren {
  if (!query) return text;
  const out: (string | VNode)[] = [];
  const lower = text.toLowerCase();
  const q = query.toLowerCase();
  let at = 0;
  for (let i = lower.indexOf(q); i >= 0; i = lower.indexOf(q, i + q.length)) {
    out.push(text.slice(at, i), <mark class="find">{text.slice(i, i + q.length)}</mark>);
    at = i + q.length;
  }
  out.push(text.slice(at));
  return out;
}

/**
 * `text` with the code-point ranges `spans` ([start, end)) wrapped in `<mark class={cls}>`; the
 * rest passes through `rest` (e.g. the local-search highlighter).
 */
export function spans(
  text: string,
  ranges: [number, number][],
  cls = "",
  rest: (part: string) => ComponentChildren = (part) => part,
): ComponentChildren {
  if (!ranges.length) return rest(text);
  const points = Array.from(text);
  const out: ComponentChildren[] = [];
  let at = 0;
  for (const [start, end] of [...ranges].sort((a, b) => a[0] - b[0])) {
    if (start < at) continue;
    out.push(rest(points.slice(at, start).join("")));
    out.push(<mark class={cls}>{points.slice(start, Math.max(start, end)).join("")}</mark>);
    at = Math.max(start, end);
  }
  out.push(rest(points.slice(at).join("")));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Code lines with a separate line-number column.

export interface CodeLine {
  n: number | string | null;
  body: ComponentChildren;
  cls?: string;
}

export function Code({ lines, wrap }: { lines: CodeLine[]; wrap: boolean }) {
  return (
    <div class={wrap ? "code wrap" : "code"}>
      {lines.map((line, i) =>
        line.cls === "gap" ? (
          <div class="gap" key={i}>
            {line.body}
          </div>
        ) : (
          [
            <span class={`ln ${line.cls ?? ""}`} key={`n${i}`}>
              {line.n ?? ""}
            </span>,
            <span class={`tx ${line.cls ?? ""}`} key={`t${i}`}>
              {line.body}
              {"\n"}
            </span>,
          ]
        ),
      )}
    </div>
  );
}

/** Splits text into lines without their endings (a trailing line ending adds no empty line). */
export function splitLines(text: string): string[] {
  const lines = text.split("\n").map((l) => l.replace(/\r$/, ""));
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  return lines;
}

// ---------------------------------------------------------------------------------------------
// Formatters.

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "June", "July", "Aug", "Sept", "Oct", "Nov", "Dec"];

/** `7 Sept 2026, 12:45:12 UTC`: readable to the second (the ISO original stays in the title). */
export function readableTime(iso: string | null | undefined): string {
  if (!iso) return "Unavailable";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const two = (n: number) => String(n).padStart(2, "0");
  return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}, ${two(d.getUTCHours())}:${two(
    d.getUTCMinutes(),
  )}:${two(d.getUTCSeconds())} UTC`;
}

export const Time = ({ iso }: { iso: string | null | undefined }) => (
  <span title={iso ?? undefined}>{readableTime(iso)}</span>
);

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let value = n;
  let unit = -1;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]} (${n} bytes)`;
}

/** Seconds, readable to the millisecond; the exact number stays in JSON and copies. */
export const seconds = (s: number | null | undefined) => (s == null ? "Unavailable" : `${s.toFixed(3)} s`);

export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export const Status = ({ ok, children }: { ok: boolean | null; children: ComponentChildren }) => (
  <span class={`pill ${ok === null ? "warn" : ok ? "ok" : "bad"}`}>{children}</span>
);
