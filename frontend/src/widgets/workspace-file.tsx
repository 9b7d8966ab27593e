// workspace_read_file: the excerpt with a separate line-number column, C/C++ coloring, a wrap toggle
// (horizontal scrolling when off), a local search, and from `resources.clangd` a configuration
// selector with semantic colors and underlined diagnostics whose hover panel shows messages and
// related locations.
import { useState } from "preact/hooks";

import { Body, mount } from "../shared/app";
import { ConfigurationSelect, clangdDecos, useConfiguration, type ClangdDocument } from "../shared/clangd";
import { cppDecos, isCpp } from "../shared/cpp";
import { decorate } from "../shared/decorate";
import { DiagnosticPanel } from "../shared/diagnostics";
import { resourcesTab, useResource, type Links } from "../shared/resources";
import { Code, Copy, Empty, Filter, Toggle, find, plural, splitLines } from "../shared/ui";

interface FileContent {
  path: string;
  text: string;
  start_line: number;
  resources: Links;
}

function FileView({ file }: { file: FileContent }) {
  const [wrap, setWrap] = useState(false);
  const [query, setQuery] = useState("");
  const clangd = useResource(file.resources.clangd?.uri);
  let doc: ClangdDocument | undefined;
  try {
    doc = clangd.text ? (JSON.parse(clangd.text) as ClangdDocument) : undefined;
  } catch {
    doc = undefined;
  }
  const config = useConfiguration(doc, file.path);
  const texts = file.text === "" ? [] : splitLines(file.text);
  const lexical = isCpp(file.path) ? cppDecos(texts) : texts.map(() => []);
  const semantic = clangdDecos(config.file, config.current, file.start_line, texts);
  const lines = texts.map((text, i) => ({
    n: file.start_line + i,
    body: decorate(text, [...lexical[i], ...semantic.decos[i]], (part) => find(part, query)),
  }));
  return (
    <DiagnosticPanel>
      <Body
        bar={
          <>
            <Filter value={query} onInput={setQuery} placeholder="Find in file" />
            <Toggle on={wrap} set={setWrap}>Wrap lines</Toggle>
            <ConfigurationSelect configurations={config.configurations} current={config.current} set={config.setSelected} />
            {doc && <span class={semantic.diagnostics ? "warn" : ""}>{plural(semantic.diagnostics, "diagnostic")}</span>}
            {clangd.error && <span class="muted" title={clangd.error}>clangd annotations unavailable</span>}
            <Copy text={file.text} title="Copy text" />
          </>
        }
      >
        {lines.length ? <Code lines={lines} wrap={wrap} /> : <Empty>No lines in the selected range.</Empty>}
      </Body>
    </DiagnosticPanel>
  );
}

mount<FileContent>({
  name: "workspace-file",
  view: (file) => {
    const count = file.text === "" ? 0 : splitLines(file.text).length;
    const range = count ? `lines ${file.start_line}–${file.start_line + count - 1}` : "no lines";
    return {
      title: (
        <span class="item">
          {file.path} <Copy text={file.path} title="Copy path" />
        </span>
      ),
      status: <span class="pill muted">{range}</span>,
      tabs: [{ id: "file", label: "File", view: () => <FileView file={file} /> }, ...resourcesTab(file.resources)],
    };
  },
});
