// Diagnostic hover panels: the focusable underline of a diagnostic range, and the one in-page panel
// per source view that shows, for the range under the pointer or keyboard focus, every diagnostic
// covering it (severity, message, source and code, range, related locations) with a copy icon.
// The panel is fixed in the viewport next to the range, stays open while the pointer is inside it,
// and closes on pointer leave (after a short delay), Escape, scrolling or resizing.
import { createContext, type ComponentChildren } from "preact";
import { useContext, useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";

import type { SourceRange } from "./decorate";
import { Copy } from "./ui";

export interface Diagnostic {
  range: SourceRange;
  severity: string | null;
  message: string;
  source: string | null;
  code: number | string | null;
  related: { location: { path: string; range: SourceRange }; message: string }[];
}

const PANEL_ID = "diagnostic-panel";
const SHOW_DELAY = 250;
const HIDE_DELAY = 200;
const GAP = 2; // between the range and the panel
const MARGIN = 4; // between the panel and the viewport edges
const MIN_ROOM = 80; // below this, the panel may cover the range rather than shrink further

const severity = (d: Diagnostic) => d.severity ?? "diagnostic";
const origin = (d: Diagnostic) => [d.source, d.code].filter((x) => x !== null && x !== "").join(" ");
const at = (p: SourceRange["start"]) => `line ${p.line}, character ${p.character}`;
const span = (r: SourceRange) => `${at(r.start)} to ${at(r.end)}`;

/** The plain-text form of the panel, as the copy icon puts it on the clipboard. */
const plain = (list: Diagnostic[]) =>
  list
    .map((d) =>
      [
        `${severity(d)}${origin(d) ? ` (${origin(d)})` : ""}: ${d.message}`,
        span(d.range),
        ...d.related.map((r) => `${r.location.path}, ${at(r.location.range.start)}: ${r.message}`),
      ].join("\n"),
    )
    .join("\n\n");

interface Hover {
  show: (target: HTMLElement, list: Diagnostic[], delay: number) => void;
  leave: () => void;
}
const HoverContext = createContext<Hover | null>(null);

/** An underlined diagnostic range: focusable, and described by the panel that hover or focus opens. */
export function Underline({ cls, list, children }: { cls: string; list: Diagnostic[]; children: ComponentChildren }) {
  const hover = useContext(HoverContext);
  return (
    <span
      class={cls}
      tabIndex={0}
      aria-describedby={PANEL_ID}
      onPointerEnter={(e) => hover?.show(e.currentTarget, list, SHOW_DELAY)}
      onPointerLeave={() => hover?.leave()}
      onFocus={(e) => hover?.show(e.currentTarget, list, 0)}
      onBlur={() => hover?.leave()}
    >
      {children}
    </span>
  );
}

const clamp = (value: number, low: number, high: number) => Math.max(low, Math.min(value, high));

/** Puts the panel below the range, or above it when there is more room there; never past an edge. */
function place(panel: HTMLElement, anchor: DOMRect) {
  const { clientWidth: width, clientHeight: height } = document.documentElement;
  panel.style.maxHeight = "";
  const below = height - anchor.bottom - GAP - MARGIN;
  const above = anchor.top - GAP - MARGIN;
  const down = panel.offsetHeight <= below || below >= above;
  panel.style.maxHeight = `${clamp(down ? below : above, MIN_ROOM, height - 2 * MARGIN)}px`;
  const h = panel.offsetHeight;
  const w = panel.offsetWidth;
  panel.style.top = `${clamp(down ? anchor.bottom + GAP : anchor.top - GAP - h, MARGIN, height - MARGIN - h)}px`;
  const left = anchor.left + w <= width - MARGIN ? anchor.left : anchor.right - w;
  panel.style.left = `${clamp(left, MARGIN, width - MARGIN - w)}px`;
}

/** Provides the hover panel to the underlines inside `children`, and renders that one panel. */
export function DiagnosticPanel({ children }: { children: ComponentChildren }) {
  const [open, setOpen] = useState<{ target: HTMLElement; list: Diagnostic[] } | null>(null);
  const panel = useRef<HTMLDivElement>(null);
  const timer = useRef<ReturnType<typeof setTimeout>>(undefined);
  const inside = useRef(false);
  const hover = useMemo<Hover>(() => {
    const later = (fn: () => void, delay: number) => {
      clearTimeout(timer.current);
      timer.current = setTimeout(fn, delay);
    };
    return {
      show: (target, list, delay) => later(() => setOpen({ target, list }), delay),
      leave: () => {
        if (!inside.current) later(() => setOpen(null), HIDE_DELAY);
      },
    };
  }, []);

  useLayoutEffect(() => {
    if (open && panel.current) place(panel.current, open.target.getBoundingClientRect());
  }, [open]);
  useEffect(() => {
    if (!open) return;
    const close = () => {
      clearTimeout(timer.current);
      inside.current = false;
      setOpen(null);
    };
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") close();
    };
    const onScroll = (e: Event) => {
      if (!panel.current?.contains(e.target as Node)) close();
    };
    addEventListener("keydown", onKey);
    addEventListener("scroll", onScroll, true);
    addEventListener("resize", close);
    return () => {
      removeEventListener("keydown", onKey);
      removeEventListener("scroll", onScroll, true);
      removeEventListener("resize", close);
    };
  }, [open]);

  return (
    <HoverContext.Provider value={hover}>
      {children}
      <div
        id={PANEL_ID}
        ref={panel}
        class="dgp"
        role="tooltip"
        hidden={!open}
        onPointerEnter={() => {
          inside.current = true;
          clearTimeout(timer.current);
        }}
        onPointerLeave={() => {
          inside.current = false;
          hover.leave();
        }}
      >
        {open && <Copy text={plain(open.list)} title="Copy diagnostics" />}
        {open?.list.map((d) => (
          <section>
            <div class="row">
              <span class={`pill sev-${d.severity ?? "information"}`}>{severity(d)}</span>
              <span class="muted">{origin(d)}</span>
            </div>
            <div class="v">{d.message}</div>
            <div class="sub">{span(d.range)}</div>
            {d.related.length > 0 && (
              <ul>
                {d.related.map((r) => (
                  <li>
                    <code>{r.location.path}</code>, {at(r.location.range.start)}: <span class="v">{r.message}</span>
                  </li>
                ))}
              </ul>
            )}
          </section>
        ))}
      </div>
    </HoverContext.Provider>
  );
}
