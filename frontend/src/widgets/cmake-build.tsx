// cmake_build: one card per profile or build preset with its configuration and step counts.
import { mount } from "../shared/app";
import { executionsView, type Execution } from "../shared/cmake";
import { Fields } from "../shared/ui";

interface Build extends Execution {
  configuration: string | null;
  completed_steps: number | null;
  total_steps: number | null;
}

const shown = (n: number | null) => (n === null ? "Unknown" : String(n));
// As in the text result: a build that reported no steps at all (failed early, or nothing to do).
const steps = (done: number | null, total: number | null) =>
  done === null && total === null ? "Unknown" : `${shown(done)} completed; ${shown(total)} total`;

mount<{ result: Build[] }>({
  name: "cmake-build",
  view: ({ result }) =>
    executionsView("Build", result, (e) => (
      <>
        <Fields
          rows={[
            ["Configuration", e.configuration ?? "Not specified"],
            ["Steps", steps(e.completed_steps, e.total_steps)],
          ]}
        />
        {e.completed_steps !== null && e.total_steps ? (
          <progress max={e.total_steps} value={e.completed_steps} style="width:100%;height:6px" />
        ) : null}
      </>
    )),
});
