/** What a child actually did in one run, taken from its tool calls (never from its text). */

export type FileAction = "written" | "edited" | "patched" | "created" | "deleted";

/** After the run: the file is there and changed as claimed, gone, or byte-for-byte as before. */
export type FileVerdict = "verified" | "missing" | "unchanged";

export type FileCheck = {
  verdict: FileVerdict;
  exists: boolean;
  size?: number;
  sha256?: string;
  /** What "changed" was judged against: the content seen just before the first write, git's index, or nothing. */
  basis: "before-write" | "git-index" | "none";
};

export type FileEvidence = {
  /** As the model named it (relative to the project, or absolute). */
  path: string;
  /** How many successful calls did each action. */
  actions: Partial<Record<FileAction, number>>;
  /** How many successful calls of each tool touched it. */
  tools: Record<string, number>;
  additions?: number;
  deletions?: number;
  /** The file just before the run's first write to it, when the plugin saw the write coming. */
  before?: { exists: boolean; sha256?: string };
  check?: FileCheck;
  seq: number;
};

export type CommandEvidence = {
  callID: string;
  /** Secrets masked. */
  command: string;
  exitCode?: number;
  durationMs?: number;
  /** The tool call failed (no exit code): its error's first line, secrets masked. */
  error?: string;
  seq: number;
};

export type FailedTool = { callID: string; tool: string; error: string; seq: number };

/** The result text claims something the evidence contradicts. */
export type Contradiction = { kind: "file-missing" | "tests-failed"; message: string };

export type RunEvidence = {
  taskId: string;
  /** 0 for the first run, n for resume #n. */
  run: number;
  files: FileEvidence[];
  commands: CommandEvidence[];
  failures: FailedTool[];
  contradictions: Contradiction[];
};

/** What a task asked for at launch: evidence required before it counts as done, and milestones. */
export type TaskEvidenceSpec = {
  expect?: { files?: string[]; command?: string };
  milestones?: boolean;
  /** Continuations sent in the current run because the expectation failed. */
  continuations: number;
};

export type EvidenceRowKind = "file" | "command" | "failure" | "contradiction";

export type EvidenceRow = { taskId: string; run: number; kind: EvidenceRowKind; key: string; data: unknown };

/**
 * Where evidence lives: rows per task and run, upserted by (task, run, kind, key), read back in
 * the order first written; and one spec per task. Synchronous like the TaskStore, and on the same
 * database, so rows written inside a settle's transaction commit with it.
 */
export interface EvidenceStore {
  put(row: EvidenceRow): void;
  rows(taskId: string, run?: number): EvidenceRow[];
  putSpec(taskId: string, spec: TaskEvidenceSpec): void;
  spec(taskId: string): TaskEvidenceSpec | undefined;
}

/** Reads a file of the project where a task's child runs (a worker's checkout, through its API); undefined when missing. */
export type FileReader = (path: string) => Promise<string | undefined>;
