import { WorkerRefusal } from "../core/errors.ts";
import type { ModelRef } from "../core/task.ts";
import type { TaskSummary } from "../core/task-summary.ts";
import type { Choice, Placement } from "../core/placement.ts";
import type { LaunchInput } from "../core/task-launcher.ts";
import type { Host } from "../host/host.ts";
import { healthText, isHealthy, type WorkerLink } from "./worker-link.ts";
import { forkByTranscript } from "../fork/fork-by-transcript.ts";

const LOCAL = "local";
const modelKey = (m: ModelRef) => `${m.providerID}/${m.modelID}`;

/**
 * Where new children go. "auto": this OpenCode while its slots for the model are free, then the
 * healthy worker with the most free capacity, else here (queued). Launches decided but not yet
 * holding their slot are reserved, so calls made at the same moment (one response's tool calls)
 * spread out instead of all taking the same free slot.
 */
export class WorkerPlacement implements Placement {
  private reserved = new Map<string, number>();

  constructor(private local: Host, private workers: ReadonlyMap<string, WorkerLink>, private forkLimits: { toolOutputLimit: number; tokenCap: number }) {}

  choose(requested: string, model: ModelRef, active: TaskSummary[], limits: { perModel: number; total: number }, waiting: TaskSummary[] = []): Choice {
    if (requested === LOCAL) return this.reserve(undefined, model);
    if (requested !== "auto") return this.reserve(this.named(requested).name, model);
    const local = active.filter((t) => !t.worker);
    const sameModel = local.filter((t) => modelKey(t.model) === modelKey(model)).length + this.count(`${LOCAL}:${modelKey(model)}`);
    if (sameModel < limits.perModel && local.length + this.count(LOCAL) < limits.total) return this.reserve(undefined, model);
    const healthy = [...this.workers.values()].filter(isHealthy);
    const load = (worker: string) => active.filter((t) => t.worker === worker).length + this.count(worker);
    const best = healthy
      .map((link) => ({ link, free: link.capacity - load(link.name) }))
      .filter((w) => w.free > 0)
      .sort((a, b) => b.free - a.free)[0];
    if (best) return this.reserve(best.link.name, model);
    // Every slot is taken: queue where the queue is shortest for its capacity, so that a burst is
    // shared out instead of all waiting here while the workers go idle.
    const localLoad = (sameModel + waiting.filter((t) => !t.worker && modelKey(t.model) === modelKey(model)).length) / limits.perModel;
    const shortest = healthy
      .map((link) => ({ link, ratio: (load(link.name) + waiting.filter((t) => t.worker === link.name).length) / link.capacity }))
      .sort((a, b) => a.ratio - b.ratio)[0];
    return this.reserve(shortest && shortest.ratio < localLoad ? shortest.link.name : undefined, model);
  }

  createSession(worker: string, title: string): Promise<{ id: string }> {
    return this.link(worker).host.createSession({ title });
  }

  fork(worker: string, input: LaunchInput & { title: string }): Promise<string> {
    return forkByTranscript(this.local, this.link(worker).host, input, this.forkLimits);
  }

  capacity(worker: string): number {
    return this.workers.get(worker)?.capacity ?? 0;
  }

  private named(name: string): WorkerLink {
    const link = this.workers.get(name);
    const names = [LOCAL, "auto", ...this.workers.keys()].join(", ");
    if (!link) throw new WorkerRefusal(`No worker "${name}". worker takes one of: ${names}.`);
    if (!isHealthy(link)) throw new WorkerRefusal(`Worker "${name}" is ${healthText(link.health())}; use worker "auto" or another of: ${names}.`);
    return link;
  }

  private link(name: string): WorkerLink {
    const link = this.workers.get(name);
    if (!link) throw new WorkerRefusal(`No worker "${name}"; worker takes one of: ${[LOCAL, "auto", ...this.workers.keys()].join(", ")}.`);
    return link;
  }

  private reserve(worker: string | undefined, model: ModelRef): Choice {
    const keys = worker ? [worker] : [LOCAL, `${LOCAL}:${modelKey(model)}`];
    for (const key of keys) this.reserved.set(key, this.count(key) + 1);
    let released = false;
    return {
      ...(worker ? { worker } : {}),
      release: () => {
        if (released) return;
        released = true;
        for (const key of keys) this.reserved.set(key, this.count(key) - 1);
      },
    };
  }

  private count(key: string): number {
    return this.reserved.get(key) ?? 0;
  }
}
