// workspace_revert: every path the revert changed (or, for a dry run, would change), each text
// file with its diff from `resources.diff` ("Highlight changes", "Wrap lines"), files that were
// changed outside ForgeMCP and overwritten marked, and the revert's own change id (revert it to redo).
import { useState } from "preact/hooks";

import { Body, mount } from "../shared/app";
import { FileDiff } from "../shared/quality";
import { type Links } from "../shared/resources";
import { Copy, Empty, Fields, Filter, Toggle, plural } from "../shared/ui";

interface RevertedFile {
  path: string;
  action: "created" | "modified" | "deleted";
  directory: boolean;
  lines_added: number;
  lines_removed: number;
  outside: boolean;
  resources: Links;
}
interface Result {
  from_change: number;
  checkpoint?: string;
  dry_run: boolean;
  change: number | null;
  files: RevertedFile[];
  kept_directories: string[];
}

const VERB = { created: "recreated", modified: "restored", deleted: "removed" };

const target = (r: Result) => (r.checkpoint === undefined ? `before change #${r.from_change}` : `checkpoint “${r.checkpoint}”`);

function Files({ result }: { result: Result }) {
  const [highlight, setHighlight] = useState(true);
  const [wrap, setWrap] = useState(false);
  const [query, setQuery] = useState("");
  const summary = result.dry_run
    ? `Dry run: going back to ${target(result)} would change ${plural(result.files.length, "path")}; nothing was changed`
    : `Went back to ${target(result)}: ${plural(result.files.length, "path")} changed`;
  return (
    <Body
      bar={
        <>
          <span class="grow">{summary}</span>
          <Filter value={query} onInput={setQuery} placeholder="Find in diffs" />
          <Toggle on={highlight} set={setHighlight}>Highlight changes</Toggle>
          <Toggle on={wrap} set={setWrap}>Wrap lines</Toggle>
        </>
      }
    >
      {result.files.length === 0 && <Empty>Nothing to revert: every path is already as it was.</Empty>}
      {result.files.map((file) => (
        <details open={!file.directory} key={file.path}>
          <summary class="item mono">
            <span class={`pill ${file.action === "deleted" ? "warn" : "ok"}`}>{VERB[file.action]}</span> {file.path}
            {file.directory ? "/" : ""}{" "}
            {file.lines_added + file.lines_removed > 0 && <span class="muted">(+{file.lines_added} −{file.lines_removed})</span>}{" "}
            <Copy text={file.path} title="Copy path" />
            {file.outside && <span class="pill bad">changed outside ForgeMCP: overwritten</span>}
          </summary>
          {file.directory ? <Empty>A directory.</Empty> : <FileDiff uri={file.resources.diff?.uri} highlight={highlight} wrap={wrap} query={query} />}
        </details>
      ))}
      {result.kept_directories.map((dir) => (
        <div class="item mono" key={dir}>
          <span class="pill muted">kept</span> {dir}/ <span class="muted">holds entries the journal never recorded</span>
        </div>
      ))}
    </Body>
  );
}

mount<Result>({
  name: "workspace-revert",
  view: (result) => ({
    title: `Revert to ${target(result)}`,
    status: (
      <span class={`pill ${result.dry_run ? "warn" : "ok"}`}>
        {result.dry_run ? "Dry run" : result.change === null ? "Nothing changed" : `Change #${result.change}`}
      </span>
    ),
    tabs: [
      { id: "files", label: "Files", view: () => <Files result={result} /> },
      {
        id: "fields",
        label: "Fields",
        view: () => (
          <Body>
            <Fields
              rows={[
                ["Went back to", target(result)],
                ["First change undone", `#${result.from_change}`],
                ["Dry run", result.dry_run ? "Yes: nothing was changed" : "No"],
                ["This revert", result.change === null ? "No change recorded" : `Change #${result.change} (revert it to redo)`],
                ["Paths", String(result.files.length)],
              ]}
            />
          </Body>
        ),
      },
    ],
  }),
});
