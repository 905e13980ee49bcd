import type { TaskProgress } from "./task.ts";

const LAST_TOOLS_KEPT = 5;

type LiveProgress = { callIDs: Set<string>; progress: TaskProgress };

/**
 * Progress of the running tasks, fed by events: each tool call id counted once, the last few
 * tool names, the last activity time. Entries are dropped when a task settles.
 */
export class ProgressTracker {
  private live = new Map<string, LiveProgress>();

  track(taskId: string, progress: TaskProgress): void {
    if (!this.live.has(taskId)) this.live.set(taskId, { callIDs: new Set(), progress: { ...progress } });
  }

  isTracked(taskId: string): boolean {
    return this.live.has(taskId);
  }

  /** Returns true when this tool call had not been seen before. */
  recordTool(taskId: string, callID: string, tool: string, now: number): boolean {
    const entry = this.live.get(taskId);
    if (!entry) return false;
    entry.progress.lastActivityAt = now;
    if (entry.callIDs.has(callID)) return false;
    entry.callIDs.add(callID);
    entry.progress.toolCalls += 1;
    entry.progress.lastTools = [...entry.progress.lastTools, tool].slice(-LAST_TOOLS_KEPT);
    return true;
  }

  recordActivity(taskId: string, now: number): void {
    const entry = this.live.get(taskId);
    if (entry) entry.progress.lastActivityAt = now;
  }

  setRetry(taskId: string, retry: TaskProgress["retry"]): void {
    const entry = this.live.get(taskId);
    if (entry) entry.progress.retry = retry;
  }

  setNote(taskId: string, note: string | undefined): void {
    const entry = this.live.get(taskId);
    if (entry) entry.progress.note = note;
  }

  setPermission(taskId: string, permission: string | undefined): void {
    const entry = this.live.get(taskId);
    if (entry) entry.progress.permission = permission;
  }

  get(taskId: string): TaskProgress | undefined {
    const entry = this.live.get(taskId);
    return entry && { ...entry.progress, lastTools: [...entry.progress.lastTools] };
  }

  release(taskId: string): void {
    this.live.delete(taskId);
  }

  size(): number {
    return this.live.size;
  }
}
