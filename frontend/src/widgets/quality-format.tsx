// quality_format: per file that needs (or needed) formatting, the diff of what clang-format changes
// (from each file's `resources.diff`), with "Highlight changes" and "Wrap lines"; a summary of the
// files checked and formatted, and failed runs.
import { useState } from "preact/hooks";

import { Body, mount } from "../shared/app";
import { Failures, FileDiff, type Failure } from "../shared/quality";
import { type Links } from "../shared/resources";
import { Copy, Empty, Fields, Filter, Toggle, plural } from "../shared/ui";

interface FormattedFile { path: string; replacements: number; incomplete: boolean; applied: boolean; resources: Links }
interface Result {
  path: string;
  toolset: string;
  apply: boolean;
  files_total: number;
  files_checked: number;
  formatted: number;
  files: FormattedFile[];
  more_files: number;
  failures: Failure[];
}

function Files({ result }: { result: Result }) {
  const [highlight, setHighlight] = useState(true);
  const [wrap, setWrap] = useState(false);
  const [query, setQuery] = useState("");
  const verb = result.apply ? "reformatted" : "need formatting";
  return (
    <Body
      bar={
        <>
          <span class="grow">
            {plural(result.files.length, "file")} {verb}; {result.formatted} already formatted
            {result.more_files > 0 && `; ${result.more_files} more not listed`}
          </span>
          <Filter value={query} onInput={setQuery} placeholder="Find in diffs" />
          <Toggle on={highlight} set={setHighlight}>Highlight changes</Toggle>
          <Toggle on={wrap} set={setWrap}>Wrap lines</Toggle>
        </>
      }
    >
      {result.files.length === 0 && <Empty>Every checked file is formatted.</Empty>}
      {result.files.map((file) => (
        <details open key={file.path}>
          <summary class="item mono">
            {file.path} <span class="muted">({plural(file.replacements, "replacement")})</span>{" "}
            <Copy text={file.path} title="Copy path" />
            {result.apply && <span class={`pill ${file.applied ? "ok" : "bad"}`}>{file.applied ? "written" : "not written"}</span>}
            {file.incomplete && <span class="pill warn">incomplete</span>}
          </summary>
          <FileDiff uri={file.resources.diff?.uri} highlight={highlight} wrap={wrap} query={query} />
        </details>
      ))}
    </Body>
  );
}

function Summary({ result }: { result: Result }) {
  const unchecked = result.files_total - result.files_checked;
  return (
    <Body>
      <Fields
        rows={[
          ["Path", result.path, result.path],
          ["Toolset", result.toolset],
          ["Mode", result.apply ? "Apply" : "Check"],
          ["Files", `${result.files_checked} of ${result.files_total} checked`],
          ["Formatted", String(result.formatted)],
          ["More needing formatting", result.more_files ? `${result.more_files} (not listed: max_files)` : "None"],
          ["Not checked", unchecked ? `${plural(unchecked, "file")}: the max_files budget was reached` : "None"],
        ]}
      />
      <Failures failures={result.failures} />
    </Body>
  );
}

mount<Result>({
  name: "quality-format",
  view: (result) => ({
    title: `clang-format on ${result.path}`,
    status: (
      <span class={`pill ${result.failures.length ? "bad" : result.files.length && !result.apply ? "warn" : "ok"}`}>
        {result.files.length ? plural(result.files.length, "file", "files") + (result.apply ? " reformatted" : " to format") : "Formatted"}
      </span>
    ),
    tabs: [
      { id: "files", label: "Files", view: () => <Files result={result} /> },
      { id: "summary", label: "Summary", view: () => <Summary result={result} /> },
    ],
  }),
});
