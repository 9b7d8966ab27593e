// workspace_file_info, workspace_write_file, workspace_edit_file, workspace_move, workspace_delete and
// workspace_mkdir: the operation's fields, and for writes and edits the diff from `resources.diff`
// with "Highlight changes" next to "Wrap lines", C/C++ colors and, from `resources.clangd`, semantic
// colors and diagnostics (with their hover panel) on new and context lines. A failed diff read leaves
// the outcome untouched.
import { useState } from "preact/hooks";

import { Body, mount, type Tab } from "../shared/app";
import { ConfigurationSelect, clangdDecos, useConfiguration, type ClangdDocument } from "../shared/clangd";
import { cppDecos, isCpp } from "../shared/cpp";
import { decorate } from "../shared/decorate";
import { DiagnosticPanel } from "../shared/diagnostics";
import { resourcesTab, useResource, type Links } from "../shared/resources";
import { Code, Empty, Fields, Filter, Time, Toggle, bytes, find, plural, type CodeLine } from "../shared/ui";

interface FileInfo {
  path: string;
  created_at: string | null;
  modified_at: string;
  size_bytes: number;
  owner: string | null;
  resources: Links;
}
interface WriteResult {
  path: string;
  action: "created" | "overwritten";
  lines_removed: number;
  lines_added: number;
  resources: Links;
}
interface EditResult {
  path: string;
  replacements: number;
  resources: Links;
}
interface PathOperation {
  path: string;
  action: "moved" | "deleted" | "created" | "already_exists";
  source: string | null;
  resources: Links;
}
type Result = FileInfo | WriteResult | EditResult | PathOperation;

interface DiffLine {
  kind: "context" | "added" | "removed";
  before_line: number | null;
  after_line: number | null;
  text: string;
  spans: [number, number][];
}
interface Diff {
  path: string;
  hunks: { lines: DiffLine[] }[];
}

const MARK = { context: " ", added: "+", removed: "-" };
const CLS = { context: "", added: "add", removed: "del" };

/** Parses a JSON resource text, or undefined. */
function parse<T>(text: string | undefined): T | undefined {
  try {
    return text === undefined ? undefined : (JSON.parse(text) as T);
  } catch {
    return undefined;
  }
}

function DiffView({ path, links, summary }: { path: string; links: Links; summary: string }) {
  const [highlight, setHighlight] = useState(true);
  const [wrap, setWrap] = useState(false);
  const [query, setQuery] = useState("");
  const uri = links.diff?.uri;
  const { text, error } = useResource(uri);
  const clangd = useResource(links.clangd?.uri);
  const config = useConfiguration(parse<ClangdDocument>(clangd.text), path);
  const rest = (part: string) => find(part, query);
  let body;
  if (!uri) body = <Empty>No diff is available for this result.</Empty>;
  else if (error) body = <div class="err">The diff is not available: {error}</div>;
  else if (text === undefined) body = <Empty>Loading…</Empty>;
  else {
    const diff = JSON.parse(text) as Diff;
    const width = String(Math.max(0, ...diff.hunks.flatMap((h) => h.lines.map((l) => l.before_line ?? l.after_line ?? 0)))).length;
    const pad = (n: number | null) => (n === null ? "" : String(n)).padStart(width);
    const lines: CodeLine[] = [];
    diff.hunks.forEach((hunk, i) => {
      if (i > 0) lines.push({ n: null, body: "⋯", cls: "gap" });
      for (const line of hunk.lines) {
        const content = line.text.replace(/\r?\n$/, "");
        // Changed substrings, lexical colors, and clangd annotations on new and context lines only.
        const decos = [
          ...(highlight ? line.spans.map(([start, end]) => ({ start, end, cls: "chg" })) : []),
          ...(isCpp(path) ? cppDecos([content])[0] : []),
          ...(line.after_line === null ? [] : clangdDecos(config.file, config.current, line.after_line, [content]).decos[0]),
        ];
        lines.push({
          n: `${pad(line.before_line)} ${pad(line.after_line)} ${MARK[line.kind]}`,
          body: decorate(content, decos, rest),
          cls: CLS[line.kind],
        });
      }
    });
    body = lines.length ? <Code lines={lines} wrap={wrap} /> : <Empty>No changes: the text is identical.</Empty>;
  }
  return (
    <DiagnosticPanel>
      <Body
        bar={
          <>
            <span class="grow">{summary}</span>
            <Filter value={query} onInput={setQuery} placeholder="Find in diff" />
            <Toggle on={highlight} set={setHighlight}>Highlight changes</Toggle>
            <Toggle on={wrap} set={setWrap}>Wrap lines</Toggle>
            <ConfigurationSelect configurations={config.configurations} current={config.current} set={config.setSelected} />
          </>
        }
      >
        {body}
      </Body>
    </DiagnosticPanel>
  );
}

const fieldsTab = (rows: Parameters<typeof Fields>[0]["rows"]): Tab => ({
  id: "fields",
  label: "Fields",
  view: () => <Body><Fields rows={rows} /></Body>,
});

const pill = (text: string, cls = "ok") => <span class={`pill ${cls}`}>{text}</span>;

mount<Result>({
  name: "workspace-result",
  view: (data) => {
    const links = data.resources;
    if ("size_bytes" in data) {
      return {
        title: data.path,
        status: pill("File information", "muted"),
        tabs: [
          fieldsTab([
            ["Path", data.path, data.path],
            ["Size", bytes(data.size_bytes), String(data.size_bytes)],
            ["Created", <Time iso={data.created_at} />, data.created_at ?? undefined],
            ["Modified", <Time iso={data.modified_at} />, data.modified_at],
            ["Owner", data.owner ?? "Unavailable"],
          ]),
          ...resourcesTab(links),
        ],
      };
    }
    if ("lines_added" in data || "replacements" in data) {
      const summary =
        "replacements" in data
          ? `Replaced ${plural(data.replacements, "occurrence")}.`
          : data.action === "created"
            ? `Created with ${plural(data.lines_added, "line")}.`
            : `Overwritten: ${plural(data.lines_removed, "line")} removed, ${plural(data.lines_added, "line")} added.`;
      const rows: [string, string, string?][] = [["Path", data.path, data.path]];
      if ("replacements" in data) rows.push(["Replacements", String(data.replacements)]);
      else rows.push(["Action", data.action], ["Lines removed", String(data.lines_removed)], ["Lines added", String(data.lines_added)]);
      return {
        title: data.path,
        status: pill("replacements" in data ? "Edited" : data.action === "created" ? "Created" : "Overwritten"),
        tabs: [
          { id: "changes", label: "Changes", view: () => <DiffView path={data.path} links={links} summary={summary} /> },
          fieldsTab(rows),
          ...resourcesTab(links),
        ],
      };
    }
    if (data.action === "moved") {
      return {
        title: "Moved",
        status: pill("Moved"),
        tabs: [fieldsTab([["Source", data.source ?? "", data.source ?? ""], ["Destination", data.path, data.path]])],
      };
    }
    const label = { deleted: "Deleted", created: "Created", already_exists: "Already exists" }[data.action];
    return {
      title: data.path,
      status: pill(label, data.action === "already_exists" ? "muted" : "ok"),
      tabs: [fieldsTab([["Path", data.path, data.path], ["Outcome", label]])],
    };
  },
});
