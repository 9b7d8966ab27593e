// The Journal section: the server's undo journal (workspace_history with diffs, newest first,
// checkpoints marked) shown by its own widget, and a revert through the same tool the agent uses:
// "Dry run" first (workspace_revert with dry_run, its widget shows every diff), then "Revert" asks
// for confirmation and reverts exactly what the dry run showed. All of it is panel calls, so it
// needs the command controls and lands in the history like any call.
import { useEffect, useState } from "preact/hooks";

import { api, type Call, type Catalog } from "./api";
import { WidgetPane } from "./widget-pane";

function widgetOf(catalog: Catalog | undefined, tool: string): string | undefined {
  const found = catalog?.tools.find((t) => t.name === tool);
  return found?._meta?.ui?.resourceUri ?? found?._meta?.["ui/resourceUri"];
}

function CallView({ iid, call, catalog, testid }: { iid: string; call: Call | undefined; catalog?: Catalog; testid: string }) {
  if (!call) return <div class="sub">Starting…</div>;
  const uri = widgetOf(catalog, call.tool);
  return (
    <div data-testid={testid} data-state={call.state}>
      {call.state === "running" && <div class="sub">Running…</div>}
      {call.error && <div class="err">{call.error.message}</div>}
      {uri && call.state !== "running" && <WidgetPane iid={iid} call={call} uri={uri} />}
    </div>
  );
}

export function Journal(props: { iid: string; calls: Map<number, Call>; catalog?: Catalog; controls: boolean }) {
  const { iid, calls, catalog, controls } = props;
  const [historyId, setHistoryId] = useState<number | null>(null);
  const [dryId, setDryId] = useState<number | null>(null);
  const [revertId, setRevertId] = useState<number | null>(null);
  const [target, setTarget] = useState("");
  const [error, setError] = useState<string | null>(null);
  const start = async (tool: string, args: Record<string, unknown>, set: (id: number) => void) => {
    setError(null);
    try {
      const { call_id } = await api.startCall(iid, tool, args);
      set(call_id);
    } catch (e) {
      setError((e as Error).message);
    }
  };
  const refresh = () => start("workspace_history", { limit: 50, diffs: true }, setHistoryId);
  useEffect(() => {
    if (controls && historyId === null) void refresh();
  }, [controls]);
  const revertArgs = (): Record<string, unknown> | null => {
    const text = target.trim();
    if (/^#?\d+$/.test(text)) return { change: Number(text.replace("#", "")) };
    return text ? { checkpoint: text } : null;
  };
  const dry = dryId === null ? undefined : calls.get(dryId);
  const dryOk = dry?.state === "completed";
  const revert = revertId === null ? undefined : calls.get(revertId);
  useEffect(() => {
    if (revert && revert.state !== "running") void refresh();
  }, [revert?.state]);
  if (!controls) {
    return <div class="empty" data-testid="journal">Enable command controls to read the journal and revert: both are calls of this panel.</div>;
  }
  const args = revertArgs();
  return (
    <div class="journal" data-testid="journal">
      <div class="row">
        <label class="grow">
          Go back to before change (id) or to checkpoint (name){" "}
          <input
            data-testid="journal-target"
            value={target}
            onInput={(e) => {
              setTarget((e.currentTarget as HTMLInputElement).value);
              setDryId(null);
              setRevertId(null);
            }}
            placeholder="12 or a checkpoint name"
          />
        </label>
        <button data-testid="journal-dry-run" disabled={!args} onClick={() => args && start("workspace_revert", { ...args, dry_run: true }, setDryId)}>
          Dry run
        </button>
        <button
          data-testid="journal-revert"
          disabled={!args || !dryOk || revertId !== null}
          title={dryOk ? "Revert what the dry run showed" : "Run the dry run first"}
          onClick={() => {
            if (args && confirm(`Revert to ${args.change === undefined ? `checkpoint “${args.checkpoint}”` : `before change #${args.change}`}? The dry run shows every file it changes; the revert can itself be reverted.`)) {
              void start("workspace_revert", args, setRevertId);
            }
          }}
        >
          Revert…
        </button>
        <button data-testid="journal-refresh" onClick={() => void refresh()}>Refresh</button>
      </div>
      {error && <div class="err">{error}</div>}
      {revertId !== null && <CallView iid={iid} call={revert} catalog={catalog} testid="journal-revert-result" />}
      {dryId !== null && revertId === null && <CallView iid={iid} call={dry} catalog={catalog} testid="journal-dry-run-result" />}
      {historyId !== null && <CallView iid={iid} call={calls.get(historyId)} catalog={catalog} testid="journal-history" />}
    </div>
  );
}
