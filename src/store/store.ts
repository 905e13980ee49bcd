import { newClaimer } from "../core/claims.ts";
import type { TaskStore } from "../core/task-store.ts";
import type { AutomationTables } from "./automation-tables.ts";
import { CommandRepository } from "./command-repository.ts";
import { openDatabase } from "./open-database.ts";
import { ProjectRepository } from "./project-repository.ts";
import { RunHistoryFold } from "./run-history-fold.ts";
import type { SqliteDatabase, SqliteStatement } from "./sqlite-driver.ts";
import { SqliteEvidenceStore } from "./sqlite-evidence-store.ts";
import { SqliteTaskStore } from "./sqlite-task-store.ts";
import { SpendRepository } from "./spend-repository.ts";
import { WorkerHealthRepository } from "./worker-health-repository.ts";

/** Spend rows recorded within this time are written together, off the event path (spend-repository.ts). */
const SPEND_WRITE_BEHIND_MS = 100;

/** The task repository as the rest of the plugin sees it: the core's port, plus retention. */
export type TaskRepository = TaskStore & { purgeOlderThan(cutoffMs: number): number };

/**
 * The plugin's database: one connection, migrated when opened, and one repository per table
 * family, each scoped to the project (the command inbox and the project list span projects).
 * They share the connection, so a write of one joins another's transaction (a run row written in
 * a settle listener commits with the settle). Consumers get repositories; the connection never
 * leaves src/store. The automation layer's tables are imported with that layer (automationTables).
 */
export class Store {
  /** This plugin instance in every claim it takes (core/claims.ts: host, pid, nonce). */
  readonly holder = newClaimer();
  readonly tasks: TaskRepository;
  readonly evidence: SqliteEvidenceStore;
  readonly commands: CommandRepository;
  readonly workerHealth: WorkerHealthRepository;
  readonly projects: ProjectRepository;
  readonly spend: SpendRepository;
  /** Bounds the automations' run history (the retention pass runs it). */
  readonly runHistory: RunHistoryFold;
  private readonly taskStore: SqliteTaskStore;
  private readonly dataVersionStatement: SqliteStatement;
  private automationTablesLoaded: Promise<AutomationTables> | undefined;

  /** Creates the folder and the file when missing, and migrates. Throws StoreUnavailableError. */
  static open({ path, projectId }: { path: string; projectId: string }): Store {
    return new Store(openDatabase(path, { create: true }), projectId);
  }

  private constructor(private readonly db: SqliteDatabase, readonly projectId: string) {
    this.taskStore = new SqliteTaskStore(db, projectId, () => this.spend.flush());
    this.tasks = this.taskStore;
    this.evidence = new SqliteEvidenceStore(db, projectId);
    this.commands = new CommandRepository(db);
    this.workerHealth = new WorkerHealthRepository(db, projectId);
    this.projects = new ProjectRepository(db);
    this.spend = new SpendRepository(db, projectId, SPEND_WRITE_BEHIND_MS);
    this.runHistory = new RunHistoryFold(db, projectId);
    this.dataVersionStatement = db.prepare("PRAGMA data_version");
  }

  get path(): string {
    return this.db.path;
  }

  /** The automation layer's repositories (automations, triggers, proposals, channel outbox), imported at the first call. */
  automationTables(): Promise<AutomationTables> {
    this.automationTablesLoaded ??= import("./automation-tables.ts").then((m) => m.automationTables(this.db, this.projectId, this.holder));
    return this.automationTablesLoaded;
  }

  /** Whether the project has an automation or a proposal (proposals are automation rows): one primary-key lookup, without loading the automation tables. */
  hasAutomations(): boolean {
    return this.db.prepare("SELECT 1 FROM automations WHERE project_id = ? LIMIT 1").get(this.projectId) !== undefined;
  }

  /** Changes whenever another connection commits: one pragma, no table read. */
  dataVersion(): number {
    return Number(this.dataVersionStatement.get()?.data_version);
  }

  /** Runs fn as one write transaction over every repository. */
  transaction<T>(fn: () => T): T {
    return this.taskStore.transaction(fn);
  }

  /** Writes the spend rows still kept, then closes the connection (the task cache with it). */
  close(): void {
    try {
      this.spend.flush();
    } finally {
      this.taskStore.close();
    }
  }
}
