// workspace_read_file: the excerpt with a separate line-number column, C/C++ coloring, a wrap toggle
// (horizontal scrolling when off) and a local search.
import { useState } from "preact/hooks";

import { Body, mount } from "../shared/app";
import { cppLines, isCpp } from "../shared/cpp";
import { Code, Copy, Empty, Filter, Toggle, find, splitLines } from "../shared/ui";

interface FileContent {
  path: string;
  text: string;
  start_line: number;
}

function FileView({ file }: { file: FileContent }) {
  const [wrap, setWrap] = useState(false);
  const [query, setQuery] = useState("");
  const rest = (part: string) => find(part, query);
  const bodies = isCpp(file.path) ? cppLines(file.text, rest) : splitLines(file.text).map((line) => [rest(line)]);
  const lines = file.text === "" ? [] : bodies.map((body, i) => ({ n: file.start_line + i, body }));
  return (
    <Body
      bar={
        <>
          <Filter value={query} onInput={setQuery} placeholder="Find in file" />
          <Toggle on={wrap} set={setWrap}>Wrap lines</Toggle>
          <Copy text={file.text} title="Copy text" />
        </>
      }
    >
      {lines.length ? <Code lines={lines} wrap={wrap} /> : <Empty>No lines in the selected range.</Empty>}
    </Body>
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
      tabs: [{ id: "file", label: "File", view: () => <FileView file={file} /> }],
    };
  },
});
