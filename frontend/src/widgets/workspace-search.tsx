// workspace_text_search: matching lines grouped by collapsible file with highlighted spans; long lines
// are clipped around the first match and expand on click; skipped files load, when their tab opens,
// from the result's own `skipped_files` resource.
import { useEffect, useState } from "preact/hooks";

import { Body, mount } from "../shared/app";
import { readResource } from "../shared/bridge";
import { Code, Copy, Empty, Filter, find, matches, plural, spans } from "../shared/ui";

interface Match {
  path: string;
  line: number;
  text: string;
  spans: [number, number][];
}
interface SearchResult {
  matches: Match[];
  matches_count: number;
  matches_truncated: boolean;
  skipped_files_count: number;
  resources: { skipped_files?: { uri: string } };
}

const CLIP = 160;
const BEFORE = 50;

function MatchLine({ match, query }: { match: Match; query: string }) {
  const [open, setOpen] = useState(false);
  const points = Array.from(match.text);
  const rest = (part: string) => find(part, query);
  if (open || points.length <= CLIP) return <>{spans(match.text, match.spans, "", rest)}</>;
  const start = Math.max(0, Math.min((match.spans[0]?.[0] ?? 0) - BEFORE, points.length - CLIP));
  const end = Math.min(points.length, start + CLIP);
  const shifted = match.spans
    .map(([s, e]): [number, number] => [Math.max(s, start) - start, Math.min(e, end) - start])
    .filter(([s, e]) => s <= e && s < end - start);
  return (
    <span class="clip" title="Click to show the whole line" onClick={() => setOpen(true)}>
      {start > 0 && <span class="muted">…</span>}
      {spans(points.slice(start, end).join(""), shifted, "", rest)}
      {end < points.length && <span class="muted">…</span>}
    </span>
  );
}

function MatchesView({ result }: { result: SearchResult }) {
  const [query, setQuery] = useState("");
  const groups = new Map<string, Match[]>();
  for (const m of result.matches) {
    if (!matches(query, m.path, m.text)) continue;
    groups.set(m.path, [...(groups.get(m.path) ?? []), m]);
  }
  const summary =
    `Returned ${result.matches.length} of ${plural(result.matches_count, "matching line")}` +
    (result.matches_truncated ? " (truncated)" : "");
  return (
    <Body
      bar={
        <>
          <Filter value={query} onInput={setQuery} placeholder="Filter paths and lines" />
          <span>{summary}</span>
        </>
      }
    >
      {groups.size === 0 && <Empty>{result.matches.length ? "No matching lines." : "No matches."}</Empty>}
      {[...groups].map(([path, lines]) => (
        <details open class="group" key={path}>
          <summary class="item">
            <span class="mono">{find(path, query)}</span> <span class="muted">({lines.length})</span>
            <Copy text={path} title="Copy path" />
          </summary>
          <Code wrap lines={lines.map((m) => ({ n: m.line, body: <MatchLine match={m} query={query} /> }))} />
        </details>
      ))}
    </Body>
  );
}

function SkippedView({ uri, count }: { uri: string; count: number }) {
  const [state, setState] = useState<{ files?: string[]; error?: string }>({});
  const [query, setQuery] = useState("");
  useEffect(() => {
    readResource(uri)
      .then((item) => setState({ files: (JSON.parse(item.text ?? "{}") as { skipped_files: string[] }).skipped_files }))
      .catch((error: Error) => setState({ error: error.message }));
  }, [uri]);
  const files = (state.files ?? []).filter((f) => matches(query, f));
  return (
    <Body
      bar={
        <>
          <Filter value={query} onInput={setQuery} placeholder="Filter skipped files" />
          <span>{plural(count, "file")} skipped as binary or not UTF-8</span>
        </>
      }
    >
      {state.error && <div class="err">Skipped files are not available: {state.error}</div>}
      {!state.files && !state.error && <Empty>Loading…</Empty>}
      {state.files && (
        <ul class="list skipped">
          {files.map((f) => (
            <li class="item mono" key={f}>
              {find(f, query)} <Copy text={f} title="Copy path" />
            </li>
          ))}
        </ul>
      )}
    </Body>
  );
}

mount<SearchResult>({
  name: "workspace-search",
  view: (result, input) => {
    const skipped = result.resources.skipped_files;
    const tabs = [{ id: "matches", label: "Matches", view: () => <MatchesView result={result} /> }];
    if (skipped) {
      const label = `Skipped files (${result.skipped_files_count})`;
      tabs.push({ id: "skipped", label, view: () => <SkippedView uri={skipped.uri} count={result.skipped_files_count} /> });
    }
    const query = typeof input.query === "string" ? `"${input.query}"` : "";
    return {
      title: `Search ${query}`.trim(),
      status: (
        <span class={`pill ${result.matches_count ? "ok" : "muted"}`}>{plural(result.matches_count, "match", "matches")}</span>
      ),
      tabs,
    };
  },
});
