// cmake_test: per execution the status counts and one row per test case (status, name, duration,
// expandable failure message), with name and status filters.
import { useState } from "preact/hooks";

import { Body, mount } from "../shared/app";
import { ProcessLink, executionName, type Execution } from "../shared/cmake";
import { Empty, Filter, Status, Toggle, find, matches, plural } from "../shared/ui";

interface TestCase {
  name: string;
  status: "passed" | "failed" | "skipped" | "not_run";
  duration_seconds: number | null;
  message: string | null;
}
interface TestRun extends Execution {
  configuration: string | null;
  tests: TestCase[];
}

const CLASS = { passed: "ok", failed: "bad", skipped: "muted", not_run: "warn" };
const STATUSES = ["passed", "failed", "skipped", "not_run"] as const;
const counts = (tests: TestCase[]) =>
  STATUSES.map((s) => [s, tests.filter((t) => t.status === s).length] as const).filter(([, n]) => n > 0);

function Runs({ runs }: { runs: TestRun[] }) {
  const [query, setQuery] = useState("");
  const [problemsOnly, setProblemsOnly] = useState(false);
  return (
    <Body
      bar={
        <>
          <Filter value={query} onInput={setQuery} placeholder="Filter tests" />
          <Toggle on={problemsOnly} set={setProblemsOnly}>Failed and not run only</Toggle>
        </>
      }
    >
      {runs.length === 0 && <Empty>No executions.</Empty>}
      {runs.map((run) => {
        const tests = run.tests.filter(
          (t) => (!problemsOnly || t.status === "failed" || t.status === "not_run") && matches(query, t.name, t.status, t.message),
        );
        return (
          <section class="card execution" key={executionName(run)}>
            <h2>
              {executionName(run)} <Status ok={run.error === null}>{run.error === null ? "Succeeded" : "Failed"}</Status>
              <span class="muted">
                {run.configuration ?? ""} {counts(run.tests).map(([s, n]) => `${n} ${s.replace("_", " ")}`).join(" · ")}
              </span>
            </h2>
            {run.error !== null && <div class="err"><pre>{run.error}</pre></div>}
            <ul class="list tests">
              {tests.map((t) => (
                <li key={t.name} class="test">
                  <div class="row">
                    <span class={`pill ${CLASS[t.status]}`}>{t.status.replace("_", " ")}</span>
                    <span class="mono grow v">{find(t.name, query)}</span>
                    <span class="muted" title={t.duration_seconds === null ? undefined : String(t.duration_seconds)}>
                      {t.duration_seconds === null ? "duration unavailable" : `${t.duration_seconds.toFixed(3)} s`}
                    </span>
                  </div>
                  {t.message && (
                    <details open={t.status === "failed"}>
                      <summary class="muted">Message</summary>
                      <pre>{t.message}</pre>
                    </details>
                  )}
                </li>
              ))}
              {tests.length === 0 && <Empty>{run.tests.length ? "No matching tests." : "No test cases reported."}</Empty>}
            </ul>
            <ProcessLink id={run.process_id} />
          </section>
        );
      })}
    </Body>
  );
}

mount<{ result: TestRun[] }>({
  name: "cmake-test",
  view: ({ result }) => {
    const failed = result.filter((r) => r.error !== null).length;
    const cases = result.reduce((n, r) => n + r.tests.length, 0);
    return {
      title: `CTest results (${plural(cases, "test case")})`,
      status: <Status ok={failed === 0}>{result.length - failed} succeeded · {failed} failed</Status>,
      tabs: [{ id: "tests", label: "Tests", view: () => <Runs runs={result} /> }],
    };
  },
});
