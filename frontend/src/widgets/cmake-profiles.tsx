// cmake_profiles: one card per effective operator profile.
import { useState } from "preact/hooks";

import { Body, mount } from "../shared/app";
import { Empty, Fields, Filter, find, matches, plural } from "../shared/ui";

interface Profile {
  name: string;
  toolset_id: string;
  mode: "plain" | "presets";
  build_directory: string | null;
  configure_presets: string[];
  build_presets: string[];
  test_presets: string[];
  configuration: string | null;
  generator: string | null;
}

const list = (items: string[]) => (items.length ? items.join(", ") : "None");

function Profiles({ profiles }: { profiles: Profile[] }) {
  const [query, setQuery] = useState("");
  const shown = profiles.filter((p) => matches(query, p.name, p.toolset_id, ...p.configure_presets));
  return (
    <Body bar={<Filter value={query} onInput={setQuery} placeholder="Filter profiles" />}>
      {shown.length === 0 && <Empty>{profiles.length ? "No matching profiles." : "No profiles."}</Empty>}
      {shown.map((p) => (
        <section class="card" key={p.name}>
          <h2>
            {find(p.name, query)} <span class="pill muted">{p.mode}</span>
          </h2>
          <Fields
            rows={[
              ["Toolset", p.toolset_id],
              ["Configuration", p.configuration ?? "Not specified"],
              ["Generator", p.generator ?? "Not specified"],
              ["Build directory", p.build_directory ?? "Not specified", p.build_directory ?? undefined],
              ...(p.mode === "presets"
                ? ([
                    ["Configure presets", list(p.configure_presets)],
                    ["Build presets", list(p.build_presets)],
                    ["Test presets", list(p.test_presets)],
                  ] as [string, string][])
                : []),
            ]}
          />
        </section>
      ))}
    </Body>
  );
}

mount<{ result: Profile[] }>({
  name: "cmake-profiles",
  view: ({ result }) => ({
    title: "CMake profiles",
    status: <span class="pill muted">{plural(result.length, "profile")}</span>,
    tabs: [{ id: "profiles", label: "Profiles", view: () => <Profiles profiles={result} /> }],
  }),
});
