// workspace_history and workspace_checkpoint: the undo journal newest first, one row per change
// (id, time, tool, origin, paths with lines added and removed), checkpoints marked, reverts and the
// change that reverted each; with `diffs`, each file's diff from its `resources.diff`; a filter over
// tools and paths; how far back the journal reaches.
import { useState } from "preact/hooks";

import { Body, mount } from "../shared/app";
import { FileDiff } from "../shared/quality";
import { type Links } from "../shared/resources";
import { Empty, Fields, Filter, Time, Toggle, bytes, matches, plural } from "../shared/ui";

interface HistoryPath {
  path: string;
  action: "created" | "modified" | "deleted" | "moved_to" | "moved_from";
  other?: string;
  directory: boolean;
  lines_added: number;
  lines_removed: number;
  resources?: Links;
}
interface Change {
  id: number;
  at: string;
  tool: string;
  origin: string;
  client?: string;
  paths: HistoryPath[];
  checkpoints: string[];
  reverted_by: number | null;
  reverts_from?: number;
}
interface Checkpoint { name: string; after: number; at: string }
interface History {
  changes: Change[];
  matching: number;
  oldest_change: number | null;
  older_dropped: boolean;
  limit_bytes: number;
  checkpoints: Checkpoint[];
}
type Result = History | Checkpoint;

function PathRow({ p, wrap, query }: { p: HistoryPath; wrap: boolean; query: string }) {
  if (p.action === "moved_to") return null;
  const counts = p.lines_added + p.lines_removed > 0 ? ` +${p.lines_added} −${p.lines_removed}` : "";
  const what = { created: "created", modified: "", deleted: "deleted", moved_from: `moved from ${p.other ?? ""}`, moved_to: "" }[p.action];
  const line = (
    <span class="mono">
      {p.path}
      {p.directory ? "/" : ""} <span class="muted">{what}</span>
      {counts && <span class="muted">{counts}</span>}
    </span>
  );
  const uri = p.resources?.diff?.uri;
  if (!uri) return <div>{line}</div>;
  return (
    <details data-testid="journal-diff">
      <summary>{line}</summary>
      <FileDiff uri={uri} highlight={true} wrap={wrap} query={query} />
    </details>
  );
}

function Changes({ history }: { history: History }) {
  const [query, setQuery] = useState("");
  const [wrap, setWrap] = useState(false);
  const shown = history.changes.filter((c) => matches(query, c.tool, `#${c.id}`, ...c.paths.map((p) => p.path)));
  const reach =
    history.oldest_change === null
      ? "The journal holds no changes yet."
      : `Reaches back to change #${history.oldest_change}${history.older_dropped ? ` (older ones dropped to stay under ${bytes(history.limit_bytes)})` : ""}.`;
  return (
    <Body
      bar={
        <>
          <span class="grow">
            {plural(history.changes.length, "change")} of {history.matching} · {reach}
          </span>
          <Filter value={query} onInput={setQuery} placeholder="Filter tools and paths" />
          <Toggle on={wrap} set={setWrap}>Wrap lines</Toggle>
        </>
      }
    >
      {shown.length === 0 && <Empty>No changes.</Empty>}
      {shown.map((c) => (
        <div key={c.id}>
          {c.checkpoints.map((name) => (
            <div class="item" key={name}>
              <span class="pill muted">checkpoint</span> <strong>{name}</strong>
            </div>
          ))}
          <div class={`item${c.reverted_by === null ? "" : " muted"}`}>
            <strong class="mono">#{c.id}</strong> <Time iso={c.at} /> <span class="mono">{c.tool}</span>{" "}
            {c.origin === "panel" && <span class="pill muted">admin panel</span>}
            {c.reverts_from !== undefined && <span class="pill warn">went back to before #{c.reverts_from}</span>}
            {c.reverted_by !== null && <span class="pill muted">reverted by #{c.reverted_by}</span>}
            {c.paths.map((p, i) => <PathRow p={p} key={i} wrap={wrap} query={query} />)}
          </div>
        </div>
      ))}
    </Body>
  );
}

mount<Result>({
  name: "workspace-history",
  view: (result) => {
    if (!("changes" in result)) {
      return {
        title: `Checkpoint “${result.name}”`,
        status: <span class="pill ok">Checkpoint</span>,
        tabs: [
          {
            id: "fields",
            label: "Fields",
            view: () => (
              <Body>
                <Fields rows={[["Name", result.name, result.name], ["After change", result.after === 0 ? "None (before the first change)" : `#${result.after}`], ["Made", <Time iso={result.at} />]]} />
              </Body>
            ),
          },
        ],
      };
    }
    return {
      title: "Change history",
      status: <span class="pill ok">{plural(result.matching, "change")}</span>,
      tabs: [
        { id: "changes", label: "Changes", view: () => <Changes history={result} /> },
        {
          id: "checkpoints",
          label: "Checkpoints",
          view: () => (
            <Body>
              {result.checkpoints.length === 0 ? (
                <Empty>No checkpoints.</Empty>
              ) : (
                <Fields rows={result.checkpoints.map((c) => [c.name, c.after === 0 ? "before the first change" : `after change #${c.after}`, c.name])} />
              )}
            </Body>
          ),
        },
      ],
    };
  },
});
