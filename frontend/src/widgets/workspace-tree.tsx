// workspace_list (directory tree) and workspace_find_files (file list with sizes and times).
import { useState } from "preact/hooks";

import { Body, mount, type Input } from "../shared/app";
import { Copy, Empty, Filter, Time, bytes, find, matches, plural } from "../shared/ui";

interface TreeEntry {
  path: string;
  kind: "file" | "directory" | "symlink" | "other";
  children: TreeEntry[] | null;
}
interface DirectoryTree {
  path: string;
  entries: TreeEntry[];
}
interface FilePaths {
  paths: string[];
  files: { path: string; modified_at: string; size_bytes: number }[];
}

const base = (path: string) => path.slice(path.lastIndexOf("/") + 1);
const count = (entries: TreeEntry[]): number => entries.reduce((n, e) => n + 1 + count(e.children ?? []), 0);

/** Entries whose path matches the filter, plus the directories leading to them. */
function prune(entries: TreeEntry[], query: string): TreeEntry[] {
  if (!query) return entries;
  return entries.flatMap((entry): TreeEntry[] => {
    const children = prune(entry.children ?? [], query);
    if (children.length) return [{ ...entry, children }];
    return matches(query, base(entry.path)) ? [{ ...entry, children: entry.children && [] }] : [];
  });
}

function Entries({ entries, query }: { entries: TreeEntry[]; query: string }) {
  return (
    <ul class="tree">
      {entries.map((entry) => {
        const name = find(base(entry.path), query);
        const label = (
          <span class="item mono" title={entry.path}>
            {name}
            {entry.kind === "directory" && "/"}
            {entry.kind === "symlink" && <span class="muted"> (symlink)</span>}
            {entry.kind === "other" && <span class="muted"> (other)</span>}
            {entry.kind === "directory" && entry.children === null && <span class="muted"> (not expanded)</span>}
            {entry.kind === "directory" && entry.children?.length === 0 && !query && <span class="muted"> (empty)</span>}
            <Copy text={entry.path} title="Copy path" />
          </span>
        );
        return (
          <li key={entry.path}>
            {entry.children?.length ? (
              <details open>
                <summary>{label}</summary>
                <Entries entries={entry.children} query={query} />
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

function TreeView({ tree }: { tree: DirectoryTree }) {
  const [query, setQuery] = useState("");
  const shown = prune(tree.entries, query);
  return (
    <Body bar={<Filter value={query} onInput={setQuery} placeholder="Filter names" />}>
      <div class="item mono tree-root">
        {tree.path}
        <Copy text={tree.path} title="Copy path" />
      </div>
      {shown.length ? <Entries entries={shown} query={query} /> : <Empty>{query ? "No matching entries." : "(empty)"}</Empty>}
    </Body>
  );
}

function FilesView({ files }: { files: FilePaths["files"] }) {
  const [query, setQuery] = useState("");
  const shown = files.filter((f) => matches(query, f.path));
  return (
    <Body bar={<Filter value={query} onInput={setQuery} placeholder="Filter paths" />}>
      {shown.length ? (
        <ul class="list paths">
          {shown.map((f) => (
            <li class="item" key={f.path}>
              <span class="mono v">{find(f.path, query)}</span>
              <Copy text={f.path} title="Copy path" />
              <div class="sub">
                {bytes(f.size_bytes)} · modified <Time iso={f.modified_at} />
              </div>
            </li>
          ))}
        </ul>
      ) : (
        <Empty>{files.length ? "No matching files." : "No files found."}</Empty>
      )}
    </Body>
  );
}

mount<DirectoryTree | FilePaths>({
  name: "workspace-tree",
  view: (data, input: Input) => {
    if ("files" in data) {
      const pattern = typeof input.pattern === "string" ? input.pattern : "*";
      return {
        title: `Files matching "${pattern}"`,
        status: <span class="pill muted">{plural(data.files.length, "file")}</span>,
        tabs: [{ id: "files", label: "Files", view: () => <FilesView files={data.files} /> }],
      };
    }
    return {
      title: `Directory tree of ${data.path}`,
      status: <span class="pill muted">{plural(count(data.entries), "entry", "entries")}</span>,
      tabs: [{ id: "tree", label: "Tree", view: () => <TreeView tree={data} /> }],
    };
  },
});
