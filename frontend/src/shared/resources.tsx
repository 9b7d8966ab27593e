// The "Resources" tab: the complete saved JSON of every result resource the result links
// (`structuredContent.resources`), each loaded through the host; a failure stays inside this tab.
import { useEffect, useState } from "preact/hooks";

import type { Tab } from "./app";
import { Body } from "./app";
import { readResource } from "./bridge";
import { Copy, Empty, JsonView } from "./ui";

export type Links = Record<string, { uri: string; mime_type?: string }>;

/** Loads one linked resource's text. */
export function useResource(uri: string | undefined) {
  const [state, setState] = useState<{ text?: string; error?: string }>({});
  useEffect(() => {
    if (!uri) return;
    readResource(uri)
      .then((item) => setState({ text: item.text }))
      .catch((error: Error) => setState({ error: error.message }));
  }, [uri]);
  return state;
}

function Saved({ name, uri }: { name: string; uri: string }) {
  const { text, error } = useResource(uri);
  let value: unknown = text;
  try {
    value = text === undefined ? undefined : JSON.parse(text);
  } catch {
    // Not JSON: shown as text.
  }
  return (
    <section class="card">
      <h2>
        {name} <span class="muted mono v">{uri}</span>
        {text !== undefined && <Copy text={text} title={`Copy ${name}`} />}
      </h2>
      {error ? <div class="err">Not available: {error}</div> : text === undefined ? <Empty>Loading…</Empty> : typeof value === "string" ? <pre>{value}</pre> : <JsonView value={value} />}
    </section>
  );
}

/** A tab listing the linked resources, or nothing when the result links none. */
export function resourcesTab(links: Links | undefined): Tab[] {
  const entries = Object.entries(links ?? {});
  if (!entries.length) return [];
  return [
    {
      id: "resources",
      label: "Resources",
      view: () => <Body>{entries.map(([name, link]) => <Saved key={name} name={name} uri={link.uri} />)}</Body>,
    },
  ];
}
