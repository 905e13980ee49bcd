import type { ToolCallInfo } from "../host/host.ts";
import type { CommandEvidence, EvidenceRow, EvidenceStore, FailedTool, FileEvidence, RunEvidence } from "./evidence-types.ts";
import { readRun } from "../store/run-evidence.ts";
import { maskSecrets } from "../core/mask-secrets.ts";

type LiveRun = {
  run: number;
  seq: number;
  files: Map<string, FileEvidence>;
  commands: Map<string, CommandEvidence>;
  failures: Map<string, FailedTool>;
  /** Calls already counted (a finished part is counted once, whatever the host repeats). */
  finished: Set<string>;
};

/**
 * Collects a running task's evidence from its tool parts as they arrive, and writes each finished
 * call to the store at once (so a restart loses nothing). One entry per running task, dropped
 * when it settles.
 */
export class EvidenceCollector {
  private live = new Map<string, LiveRun>();

  /** `runOf` says which run (resume count) a running task is in; undefined for a session that is not a task. */
  constructor(private store: EvidenceStore, private runOf: (taskId: string) => number | undefined) {}

  record(taskId: string, callID: string, tool: string, call: ToolCallInfo): void {
    if (call.status !== "completed" && call.status !== "error") return;
    const live = this.liveRun(taskId);
    if (!live || live.finished.has(callID)) return;
    live.finished.add(callID);
    if (call.status === "error") this.recordFailure(taskId, live, callID, tool, call);
    else for (const file of call.files) this.recordFile(taskId, live, tool, file, call);
    if (call.command !== undefined) this.recordCommand(taskId, live, callID, call);
  }

  /** The file as it was just before the run's first write to it (only the first snapshot counts). */
  recordBefore(taskId: string, path: string, before: NonNullable<FileEvidence["before"]>): void {
    const live = this.liveRun(taskId);
    if (!live) return;
    const file = live.files.get(path) ?? this.newFile(live, path);
    if (file.before) return;
    file.before = before;
    this.put(taskId, live, "file", path, file);
  }

  /** Whether the run has seen this file (a snapshot was taken or a write counted). */
  knows(taskId: string, path: string): boolean {
    return this.live.get(taskId)?.files.has(path) ?? false;
  }

  /** The task's evidence for its current run (or `run`), from the store. */
  evidence(taskId: string, run?: number): RunEvidence {
    return readRun(this.store, taskId, run ?? this.live.get(taskId)?.run ?? this.runOf(taskId) ?? 0);
  }

  /** Saves a file's verification or other whole-row changes. */
  saveFile(taskId: string, run: number, file: FileEvidence): void {
    this.store.put({ taskId, run, kind: "file", key: file.path, data: file });
    const live = this.live.get(taskId);
    if (live?.run === run) live.files.set(file.path, file);
  }

  /** Replaces the run's contradictions (one row: a later check of the same run supersedes an earlier one). */
  saveContradictions(taskId: string, run: number, contradictions: RunEvidence["contradictions"]): void {
    this.store.put({ taskId, run, kind: "contradiction", key: "all", data: contradictions });
  }

  release(taskId: string): void {
    this.live.delete(taskId);
  }

  size(): number {
    return this.live.size;
  }

  private liveRun(taskId: string): LiveRun | undefined {
    const existing = this.live.get(taskId);
    if (existing) return existing;
    const run = this.runOf(taskId);
    if (run === undefined) return undefined;
    const stored = readRun(this.store, taskId, run);
    const live: LiveRun = {
      run,
      seq: Math.max(0, ...[...stored.files, ...stored.commands, ...stored.failures].map((e) => e.seq)),
      files: new Map(stored.files.map((f) => [f.path, f])),
      commands: new Map(stored.commands.map((c) => [c.callID, c])),
      failures: new Map(stored.failures.map((f) => [f.callID, f])),
      finished: new Set([...stored.commands.map((c) => c.callID), ...stored.failures.map((f) => f.callID)]),
    };
    this.live.set(taskId, live);
    return live;
  }

  private newFile(live: LiveRun, path: string): FileEvidence {
    const file: FileEvidence = { path, actions: {}, tools: {}, seq: ++live.seq };
    live.files.set(path, file);
    return file;
  }

  private recordFile(taskId: string, live: LiveRun, tool: string, touched: ToolCallInfo["files"][number], call: ToolCallInfo): void {
    const file = live.files.get(touched.path) ?? this.newFile(live, touched.path);
    file.actions[touched.action] = (file.actions[touched.action] ?? 0) + 1;
    file.tools[tool] = (file.tools[tool] ?? 0) + 1;
    if (call.additions !== undefined) file.additions = (file.additions ?? 0) + call.additions;
    if (call.deletions !== undefined) file.deletions = (file.deletions ?? 0) + call.deletions;
    this.put(taskId, live, "file", file.path, file);
  }

  private recordCommand(taskId: string, live: LiveRun, callID: string, call: ToolCallInfo): void {
    const command: CommandEvidence = { callID, command: maskSecrets(call.command ?? ""), seq: ++live.seq };
    if (call.exitCode !== undefined) command.exitCode = call.exitCode;
    if (call.startedAt !== undefined && call.endedAt !== undefined) command.durationMs = call.endedAt - call.startedAt;
    if (call.error !== undefined) command.error = maskSecrets(call.error);
    live.commands.set(callID, command);
    this.put(taskId, live, "command", callID, command);
  }

  private recordFailure(taskId: string, live: LiveRun, callID: string, tool: string, call: ToolCallInfo): void {
    const failure: FailedTool = { callID, tool, error: maskSecrets(call.error ?? "unknown error"), seq: ++live.seq };
    live.failures.set(callID, failure);
    this.put(taskId, live, "failure", callID, failure);
  }

  private put(taskId: string, live: LiveRun, kind: EvidenceRow["kind"], key: string, data: unknown): void {
    this.store.put({ taskId, run: live.run, kind, key, data });
  }
}
