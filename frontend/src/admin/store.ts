// The panel's state: instances, their history and pending questions, kept current by the Hub's
// event stream. Components subscribe with useStore(); changes are batched per animation frame.
import { useEffect, useState } from "preact/hooks";

import { api, ApiError, type Call, type Catalog, type Elicitation, eventsUrl, type Instance } from "./api";

export type HubState = "connecting" | "live" | "lost" | "signed-out";

export interface InstanceData {
  calls: Map<number, Call>;
  elicitations: Map<string, Elicitation>;
  historyError?: string;
  catalog?: Catalog;
  catalogError?: string;
  catalogLoading?: boolean;
}

const MAX_PROGRESS = 200;

class Store {
  hub: HubState = "connecting";
  instances = new Map<string, Instance>();
  data = new Map<string, InstanceData>();
  controls = false;
  private listeners = new Set<() => void>();
  private scheduled = false;

  changed() {
    if (this.scheduled) return;
    this.scheduled = true;
    requestAnimationFrame(() => {
      this.scheduled = false;
      this.listeners.forEach((listener) => listener());
    });
  }

  subscribe(listener: () => void) {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  dataOf(iid: string): InstanceData {
    let data = this.data.get(iid);
    if (!data) {
      data = { calls: new Map(), elicitations: new Map() };
      this.data.set(iid, data);
    }
    return data;
  }

  /** Instances in tab order (the order they first joined). */
  sortedInstances(): Instance[] {
    return [...this.instances.values()].sort((a, b) => a.order - b.order);
  }

  async loadHistory(iid: string) {
    const data = this.dataOf(iid);
    try {
      const { calls } = await api.history(iid);
      // Events that arrived meanwhile are newer than the list for the calls they name.
      const fresh = new Map(calls.map((call) => [call.call_id, call]));
      for (const [id, call] of data.calls) {
        const listed = fresh.get(id);
        if (!listed || (listed.state === "running" && call.state !== "running")) fresh.set(id, call);
      }
      data.calls = new Map([...fresh.entries()].sort((a, b) => a[0] - b[0]));
      data.historyError = undefined;
    } catch (error) {
      data.historyError = (error as Error).message;
    }
    this.changed();
  }

  async loadCatalog(iid: string, force = false) {
    const data = this.dataOf(iid);
    if ((data.catalog && !force) || data.catalogLoading) return;
    data.catalogLoading = true;
    this.changed();
    try {
      data.catalog = await api.catalog(iid);
      data.catalogError = undefined;
    } catch (error) {
      data.catalogError = (error as Error).message;
    }
    data.catalogLoading = false;
    this.changed();
  }

  private handle(event: any) {
    switch (event.kind) {
      case "hello": {
        const seen = new Set<string>();
        for (const instance of event.instances as Instance[]) {
          seen.add(instance.instance_id);
          this.instances.set(instance.instance_id, instance);
          void this.loadHistory(instance.instance_id);
        }
        for (const iid of [...this.instances.keys()]) if (!seen.has(iid)) this.instances.delete(iid);
        break;
      }
      case "instance_added":
      case "instance_updated": {
        const instance = event.instance as Instance;
        const before = this.instances.get(instance.instance_id);
        this.instances.set(instance.instance_id, instance);
        if (instance.state === "connected" && before?.state !== "connected") {
          // A (re)joined instance cancelled its open questions when its link dropped.
          this.dataOf(instance.instance_id).elicitations.clear();
          void this.loadHistory(instance.instance_id);
        }
        break;
      }
      case "instance_removed":
        this.instances.delete(event.instance_id);
        this.data.delete(event.instance_id);
        break;
      case "call_started":
      case "call_finished": {
        const call = event.call as Call;
        this.dataOf(event.instance_id).calls.set(call.call_id, call);
        break;
      }
      case "call_progress": {
        const call = this.dataOf(event.instance_id).calls.get(event.call_id);
        if (call) {
          call.progress = [...call.progress, event.progress].slice(-MAX_PROGRESS);
          this.dataOf(event.instance_id).calls.set(call.call_id, { ...call });
        }
        break;
      }
      case "elicitation_requested":
        this.dataOf(event.instance_id).elicitations.set(event.elicitation.elicitation_id, event.elicitation);
        break;
      case "elicitation_resolved":
        this.dataOf(event.instance_id).elicitations.delete(event.elicitation_id);
        break;
      case "resync":
        for (const iid of this.instances.keys()) void this.loadHistory(iid);
        break;
    }
    this.changed();
  }

  /** Follows the Hub's event stream; tells "connection lost" from "signed out" when it breaks. */
  connect() {
    const source = new EventSource(eventsUrl());
    source.onmessage = (message) => {
      if (this.hub !== "live") {
        this.hub = "live";
        this.changed();
      }
      this.handle(JSON.parse(message.data));
    };
    source.onerror = async () => {
      source.close();
      this.hub = "lost";
      this.changed();
      try {
        await api.instances();
        setTimeout(() => this.connect(), 500);
      } catch (error) {
        if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
          this.hub = "signed-out";
          this.changed();
        } else {
          setTimeout(() => this.connect(), 1000);
        }
      }
    };
  }
}

export const store = new Store();

export function useStore(): Store {
  const [, setVersion] = useState(0);
  useEffect(() => store.subscribe(() => setVersion((v) => v + 1)), []);
  return store;
}
