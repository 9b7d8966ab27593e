// cmake_targets: per profile one row per target (type, defining CMakeLists.txt line, artifact,
// dependencies, tests), with a name filter; with `path`, whether each target compiles or includes it.
import { useState } from "preact/hooks";

import { Body, mount } from "../shared/app";
import { executionName } from "../shared/cmake";
import { Empty, Filter, Status, find, matches, plural } from "../shared/ui";

interface Target {
  name: string;
  type: string;
  artifact: string | null;
  dependencies: string[];
  sources: number;
  defined_at: string | null;
  tests: string[];
  via: "compiles" | "includes" | null;
}
interface Targets {
  profile: string;
  preset: string | null;
  configuration: string | null;
  targets: Target[];
  total: number;
  note: string | null;
  error: string | null;
}

const KIND = (type: string) => (type === "executable" ? "ok" : type === "utility" ? "muted" : "warn");

function Profiles({ items }: { items: Targets[] }) {
  const [query, setQuery] = useState("");
  return (
    <Body bar={<Filter value={query} onInput={setQuery} placeholder="Filter targets" />}>
      {items.length === 0 && <Empty>No profiles.</Empty>}
      {items.map((item) => {
        const shown = item.targets.filter((t) => matches(query, t.name, t.type, t.defined_at, ...t.tests));
        return (
          <section class="card execution" key={executionName({ ...item, process_id: null })}>
            <h2>
              {executionName({ ...item, process_id: null })}{" "}
              <Status ok={item.error === null}>{item.error === null ? plural(item.total, "target") : "Failed"}</Status>
              <span class="muted">{item.configuration ?? ""}</span>
            </h2>
            {item.error !== null && <div class="err"><pre>{item.error}</pre></div>}
            <ul class="list targets">
              {shown.map((t) => (
                <li key={t.name}>
                  <div class="row">
                    <span class={`pill ${KIND(t.type)}`}>{t.type.replace("_", " ")}</span>
                    <span class="mono grow v">{find(t.name, query)}</span>
                    {t.via && <span class="pill muted">{t.via}</span>}
                    <span class="muted">{plural(t.sources, "source")}</span>
                  </div>
                  <div class="sub mono">
                    {t.defined_at ?? "Definition unknown"}
                    {t.artifact ? ` → ${t.artifact}` : ""}
                  </div>
                  {(t.dependencies.length > 0 || t.tests.length > 0) && (
                    <div class="sub muted">
                      {t.dependencies.length > 0 && `Depends on ${t.dependencies.join(", ")}`}
                      {t.dependencies.length > 0 && t.tests.length > 0 && " · "}
                      {t.tests.length > 0 && `Tests ${t.tests.join(", ")}`}
                    </div>
                  )}
                </li>
              ))}
              {item.error === null && shown.length === 0 && (
                <Empty>{item.targets.length ? "No matching targets." : "No targets."}</Empty>
              )}
            </ul>
            {item.total > item.targets.length && (
              <div class="sub muted">{item.total - item.targets.length} more (raise limit to list them)</div>
            )}
            {item.note && <div class="sub muted">{item.note}</div>}
          </section>
        );
      })}
    </Body>
  );
}

mount<{ result: Targets[] }>({
  name: "cmake-targets",
  view: ({ result }) => {
    const failed = result.filter((r) => r.error !== null).length;
    const targets = result.reduce((n, r) => n + r.total, 0);
    return {
      title: `CMake targets (${plural(targets, "target")})`,
      status: <Status ok={failed === 0}>{result.length - failed} read · {failed} failed</Status>,
      tabs: [{ id: "targets", label: "Targets", view: () => <Profiles items={result} /> }],
    };
  },
});
