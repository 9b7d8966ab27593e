// cmake_run_test: the executable, its literal arguments, working directory and outcome.
import { Body, mount } from "../shared/app";
import { ProcessLink } from "../shared/cmake";
import { Fields, Status } from "../shared/ui";

interface RunTest {
  executable: string;
  arguments: string[];
  cwd: string;
  error: string | null;
  process_id: number | null;
}

mount<RunTest>({
  name: "cmake-run-test",
  view: (run) => ({
    title: `Test executable ${run.executable}`,
    status: <Status ok={run.error === null}>{run.error === null ? "Succeeded" : "Failed"}</Status>,
    tabs: [
      {
        id: "fields",
        label: "Fields",
        view: () => (
          <Body>
            <Fields
              rows={[
                ["Executable", run.executable, run.executable],
                [
                  "Arguments",
                  run.arguments.length ? run.arguments.map((a, i) => `${i + 1}. ${JSON.stringify(a)}`).join("\n") : "None",
                  JSON.stringify(run.arguments),
                ],
                ["Working directory", run.cwd, run.cwd],
              ]}
            />
            {run.error !== null && <div class="err"><pre>{run.error}</pre></div>}
            <ProcessLink id={run.process_id} />
          </Body>
        ),
      },
    ],
  }),
});
