// cmake_configure: one card per profile or configure preset with build directory and database.
import { mount } from "../shared/app";
import { executionsView, type Execution } from "../shared/cmake";
import { Fields } from "../shared/ui";

interface Configure extends Execution {
  build_directory: string | null;
  compilation_database: string | null;
}

mount<{ result: Configure[] }>({
  name: "cmake-configure",
  view: ({ result }) =>
    executionsView("Configure", result, (e) => (
      <Fields
        rows={[
          ["Build directory", e.build_directory ?? "Not known", e.build_directory ?? undefined],
          ["Compilation database", e.compilation_database ?? "None", e.compilation_database ?? undefined],
        ]}
      />
    )),
});
