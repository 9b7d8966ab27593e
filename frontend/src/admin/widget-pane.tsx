// A tool's MCP App widget inside the panel: the document read once per instance and URI, hosted in
// the sandbox origin by `WidgetHost`, following the panel between light and dark.
import { useEffect, useRef, useState } from "preact/hooks";

import { api, type Call, type ResourceContents, sandboxOrigin } from "./api";
import { WidgetHost } from "./host";

export const theme = (): "light" | "dark" => (matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light");

/** Widget documents, read once per instance and URI. */
const widgetCache = new Map<string, Promise<ResourceContents>>();

function readWidget(iid: string, uri: string): Promise<ResourceContents> {
  const key = `${iid} ${uri}`;
  let pending = widgetCache.get(key);
  if (!pending) {
    pending = api.readResource(iid, uri).then(({ contents }) => {
      if (contents.length !== 1) throw new Error(`${uri} has ${contents.length} content items, not one`);
      if (contents[0].mimeType !== "text/html;profile=mcp-app") throw new Error(`${uri} is not an MCP App (${contents[0].mimeType})`);
      return contents[0];
    });
    pending.catch(() => widgetCache.delete(key));
    widgetCache.set(key, pending);
  }
  return pending;
}

export function WidgetPane({ iid, call, uri }: { iid: string; call: Call; uri: string }) {
  const box = useRef<HTMLDivElement>(null);
  const host = useRef<WidgetHost | null>(null);
  // The host starts when the widget document has loaded, which may be after the call has ended:
  // it must start from the newest state of the call, not the one this effect began with.
  const latest = useRef(call);
  latest.current = call;
  const [error, setError] = useState<string | null>(null);
  const [log, setLog] = useState<string[]>([]);
  useEffect(() => {
    let live = true;
    readWidget(iid, uri).then(
      (contents) => {
        if (!live || !box.current) return;
        const html = contents.text ?? (contents.blob ? new TextDecoder().decode(Uint8Array.from(atob(contents.blob), (c) => c.charCodeAt(0))) : "");
        host.current = new WidgetHost(box.current, latest.current, {
          sandboxOrigin,
          html,
          ui: contents._meta?.ui as WidgetHostUi,
          toolName: call.tool,
          theme: theme(),
          read: (resource) => api.readResource(iid, resource),
          log: (line) => setLog((lines) => [...lines.slice(-20), line]),
        });
      },
      (e: Error) => live && setError(e.message),
    );
    return () => {
      live = false;
      void host.current?.destroy();
      host.current = null;
    };
  }, [iid, uri, call.call_id]);
  useEffect(() => host.current?.update(call), [call]);
  useEffect(() => {
    // The widget follows the panel's light or dark scheme as it changes.
    const scheme = matchMedia("(prefers-color-scheme: dark)");
    const changed = () => host.current?.setTheme(theme());
    scheme.addEventListener("change", changed);
    return () => scheme.removeEventListener("change", changed);
  }, []);
  return (
    <div class="widget">
      {error && <div class="err">The widget could not be loaded: {error}</div>}
      <div ref={box} data-testid="widget-box" />
      {log.length > 0 && (
        <ul class="log">
          {log.map((line) => (
            <li class="sub">{line}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

type WidgetHostUi = { permissions?: { clipboardWrite?: object } } | undefined;

