// toolsets_list (summaries only) and toolset_get (the tools of one toolset with kinds, absolute
// paths and versions), told apart by the shape of the result.
import { useState } from "preact/hooks";

import { Body, mount } from "../shared/app";
import { Copy, Empty, Filter, find, matches, plural } from "../shared/ui";

interface Summary {
  id: string;
  name: string;
  tools: string[];
}
interface Details {
  id: string;
  name: string;
  tools: { name: string; kind: string; path: string; version: string | null }[];
}

function Summaries({ toolsets }: { toolsets: Summary[] }) {
  const [query, setQuery] = useState("");
  const shown = toolsets.filter((t) => matches(query, t.name, t.id, ...t.tools));
  return (
    <Body bar={<Filter value={query} onInput={setQuery} placeholder="Filter toolsets and tools" />}>
      {shown.length === 0 && <Empty>{toolsets.length ? "No matching toolsets." : "No toolsets discovered."}</Empty>}
      {shown.map((t) => (
        <section class="card" key={t.id}>
          <h2 class="item">
            {find(t.name, query)} <span class="muted mono">{t.id}</span> <Copy text={t.id} title="Copy toolset id" />
          </h2>
          <div class="mono v">{t.tools.length ? t.tools.map((tool, i) => <>{i ? ", " : ""}{find(tool, query)}</>) : "Tools: none"}</div>
        </section>
      ))}
    </Body>
  );
}

function Tools({ toolset }: { toolset: Details }) {
  const [query, setQuery] = useState("");
  const shown = toolset.tools.filter((t) => matches(query, t.name, t.kind, t.path, t.version));
  return (
    <Body bar={<Filter value={query} onInput={setQuery} placeholder="Filter tools" />}>
      {shown.length === 0 && <Empty>{toolset.tools.length ? "No matching tools." : "This toolset has no tools."}</Empty>}
      <ul class="list">
        {shown.map((t) => (
          <li class="item" key={t.name}>
            <div class="row">
              <b class="mono">{find(t.name, query)}</b>
              <span class="pill muted">{t.kind.replace("_", " ")}</span>
              <span class={t.version ? "" : "muted"}>{t.version ?? "version unknown"}</span>
            </div>
            <div class="mono v sub">
              {find(t.path, query)} <Copy text={t.path} title="Copy path" />
            </div>
          </li>
        ))}
      </ul>
    </Body>
  );
}

mount<{ result: Summary[] } | Details>({
  name: "toolsets",
  view: (data) =>
    "result" in data
      ? {
          title: "Toolsets",
          status: <span class="pill muted">{plural(data.result.length, "toolset")}</span>,
          tabs: [{ id: "toolsets", label: "Toolsets", view: () => <Summaries toolsets={data.result} /> }],
        }
      : {
          title: `${data.name} (${data.id})`,
          status: <span class="pill muted">{plural(data.tools.length, "tool")}</span>,
          tabs: [{ id: "tools", label: "Tools", view: () => <Tools toolset={data} /> }],
        },
});
