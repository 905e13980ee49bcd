import { relative, resolve } from "node:path";
import { existsSync } from "node:fs";
import type { HostEvent, HostMessage } from "../host/host.ts";
import type { RunningTasks } from "../core/running-tasks.ts";
import type { RunEndDecision, TaskHooks } from "../core/task-hooks.ts";
import type { Task } from "../core/task.ts";
import { EvidenceCollector } from "./evidence-collector.ts";
import { readRun } from "../store/run-evidence.ts";
import type { EvidenceStore, FileReader, RunEvidence, TaskEvidenceSpec } from "./evidence-types.ts";
import { evidenceDetails, evidenceSummary } from "./evidence-summary.ts";
import { absolutePath, snapshotFile, verifyFiles } from "./verify-files.ts";
import { findContradictions } from "./contradiction-check.ts";
import { checkExpectation, type Expectation } from "./expectation-check.ts";
import { LoopDetector } from "./loop-detector.ts";
import { maskSecrets } from "../core/mask-secrets.ts";
import { milestoneLine, milestoneText, startedDetail, type Milestone } from "./milestone-text.ts";

export type EvidenceConfig = { maxContinuations: number; expectTimeoutSeconds: number; stalledLoopLimit: number; milestones: boolean };

/** What background_task passes through LaunchInput.extras. */
export type EvidenceRequest = { expect?: Expectation; milestones?: boolean };

/**
 * Evidence for every task, taken from its child's tool calls: collected as events arrive, verified
 * on disk when a run ends, checked against the task's `expect`, summarised in its notification.
 * Also stops children that loop, and sends milestone notices. Plugs into the core as its hooks.
 */
export class EvidenceService implements TaskHooks {
  readonly collector: EvidenceCollector;
  private loops: LoopDetector;

  /** `filesOf`: where a task's files are read when its child runs on a worker (none: the project directory). */
  constructor(
    private tasks: RunningTasks, private store: EvidenceStore, private projectDir: string, private config: EvidenceConfig,
    private filesOf: (task: Task) => FileReader | undefined = () => undefined,
  ) {
    this.collector = new EvidenceCollector(store, (id) => this.runOf(id));
    this.loops = new LoopDetector(config.stalledLoopLimit);
  }

  /** Tool parts and finished answers of running children; everything else is ignored at the cost of a map lookup. */
  handleEvent(event: HostEvent): void {
    if (!this.tasks.isRunning(event.sessionID)) return;
    if (event.type === "tool" && event.call) {
      this.collector.record(event.sessionID, event.callID, event.tool, event.call);
      if (event.call.status === "completed" || event.call.status === "error") {
        this.stopIfLooping(event.sessionID, this.loops.onToolCall(event.sessionID, event.callID, event.tool, event.call.inputKey));
      }
    }
    if (event.type === "message" && isFinishedAnswer(event.message)) {
      this.stopIfLooping(event.sessionID, this.loops.onAnswer(event.sessionID, event.message.id, event.message.toolCallsPending));
    }
  }

  /** Before a tool writes: the files as they are now, for "changed" later. Awaited by the host before the tool runs. */
  async beforeWrite(sessionID: string, paths: string[]): Promise<void> {
    if (!this.tasks.isRunning(sessionID)) return;
    for (const path of paths) {
      if (this.collector.knows(sessionID, path)) continue;
      const now = await snapshotFile(absolutePath(this.directoryOf(sessionID), path));
      this.collector.recordBefore(sessionID, path, now.sha256 ? { exists: now.exists, sha256: now.sha256 } : { exists: now.exists });
    }
  }

  launched(task: Task, extras: unknown): void {
    const request = (extras ?? {}) as EvidenceRequest;
    if (!request.expect && request.milestones === undefined) return;
    this.store.putSpec(task.id, { expect: request.expect, milestones: request.milestones, continuations: 0 });
  }

  started(task: Task): void {
    this.milestone(task, "started", startedDetail(task));
  }

  async runEnded(task: Task, result: string): Promise<RunEndDecision> {
    const run = task.resumeCount;
    const read = this.filesOf(task);
    const dir = this.directoryOf(task.id);
    const files = await verifyFiles(dir, this.collector.evidence(task.id, run).files, read);
    for (const file of files) this.collector.saveFile(task.id, run, file);
    const commands = this.collector.evidence(task.id, run).commands;
    // A worker's files: what the check just read is all that is known of them.
    const exists = read ? (path: string) => files.some((f) => f.path === path && f.check?.exists) : (path: string) => existsSync(absolutePath(dir, path));
    this.collector.saveContradictions(task.id, run, findContradictions(result, files, commands, exists));
    const spec = this.store.spec(task.id);
    if (!spec?.expect) return { kind: "complete" };
    return this.judgeExpectation(task, spec, spec.expect);
  }

  settling(task: Task): void {
    const evidence = this.collector.evidence(task.id, task.resumeCount);
    const summary = evidenceSummary(evidence);
    if (summary) task.evidence = summary;
    this.collector.release(task.id);
    this.loops.release(task.id);
    const spec = this.store.spec(task.id);
    if (spec && spec.continuations > 0) this.store.putSpec(task.id, { ...spec, continuations: 0 });
    if (this.wantsMilestones(task, spec)) {
      const milestone = task.status as Milestone;
      this.tasks.notifyParent(task, `milestone:${milestone}`, milestoneText(task, milestone, `${milestone}.`), milestoneLine(task, milestone, `${milestone}.`));
    }
  }

  /** The short block for a task's latest run, or every run in full. */
  describe(task: Task, full: boolean): string {
    if (!full) return evidenceSummary(readRun(this.store, task.id, task.resumeCount));
    const runs: string[] = [];
    for (let run = 0; run <= task.resumeCount; run++) runs.push(evidenceDetails(readRun(this.store, task.id, run)));
    return runs.join("\n");
  }

  /** Running children tracked here; zero when nothing runs. */
  /** Files the task's current run wrote or is about to write, relative to the project (a watch trigger skips them). */
  filesWritten(taskId: string): string[] {
    return this.collector.evidence(taskId).files.map((f) => relative(this.projectDir, resolve(this.projectDir, f.path)));
  }

  size(): number {
    return this.collector.size() + this.loops.size();
  }

  private async judgeExpectation(task: Task, spec: TaskEvidenceSpec, expect: Expectation): Promise<RunEndDecision> {
    const outcome = await checkExpectation(this.directoryOf(task.id), expect, this.config.expectTimeoutSeconds * 1000, this.filesOf(task));
    if (outcome.ok) {
      this.milestone(task, "evidence_verified", `its expectation is met: ${outcome.met.join("; ")}.`);
      return { kind: "complete" };
    }
    const problems = outcome.problems.map(maskSecrets);
    if (spec.continuations >= this.config.maxContinuations) {
      return { kind: "error", error: `evidence_missing: after ${spec.continuations} continuation(s) the expectation still fails: ${problems.join(" ")}` };
    }
    const continuations = spec.continuations + 1;
    this.store.putSpec(task.id, { ...spec, continuations });
    const detail = `continuation ${continuations} of ${this.config.maxContinuations}: ${problems.map((p) => p.split("\n")[0]).join(" ")}`;
    this.tasks.setProgressNote(task.id, detail);
    return {
      kind: "continue",
      detail,
      prompt: [
        `This task is not done yet. It is expected to leave evidence, and the check after your answer found:`,
        ...problems.map((p) => `- ${p}`),
        `Fix this now, then answer again. (Automatic continuation ${continuations} of ${this.config.maxContinuations}.)`,
      ].join("\n"),
    };
  }

  private stopIfLooping(taskId: string, repeated: string | undefined): void {
    if (!repeated) return;
    this.tasks.stop(taskId, maskSecrets(`stalled_loop: the child repeated ${repeated}.`));
  }

  private milestone(task: Task, milestone: Milestone, detail: string): void {
    if (!this.wantsMilestones(task, this.store.spec(task.id))) return;
    this.tasks.notifyParent(task, `milestone:${milestone}`, milestoneText(task, milestone, detail), milestoneLine(task, milestone, detail));
  }

  /** Never for a task that does not notify its parent (an automation's: its layer tells by its own policy). */
  private wantsMilestones(task: Task, spec: TaskEvidenceSpec | undefined): boolean {
    if (task.notify === false) return false;
    return spec?.milestones ?? this.config.milestones;
  }

  /** Where the task's child works: its worktree (isolation), else the project. */
  private directoryOf(taskId: string): string {
    return this.tasks.directoryOf(taskId) ?? this.projectDir;
  }

  private runOf(taskId: string): number | undefined {
    return this.tasks.get(taskId)?.resumeCount;
  }
}

/** A finished answer of the model; the host's compaction summary is not one. */
function isFinishedAnswer(m: Omit<HostMessage, "text">): boolean {
  return m.role === "assistant" && m.completedAt !== undefined && !m.error && !m.summary;
}

export type { RunEvidence };
