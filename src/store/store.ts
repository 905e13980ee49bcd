import { newClaimer } from "../core/claims.ts";
import type { TaskStore } from "../core/task-store.ts";
import { AutomationRepository } from "./automation-repository.ts";
import { ChannelOutboxRepository } from "./channel-outbox-repository.ts";
import { CommandRepository } from "./command-repository.ts";
import { openDatabase } from "./open-database.ts";
import { ProjectRepository } from "./project-repository.ts";
import { ProposalRepository } from "./proposal-repository.ts";
import type { SqliteDatabase, SqliteStatement } from "./sqlite-driver.ts";
import { SqliteEvidenceStore } from "./sqlite-evidence-store.ts";
import { SqliteTaskStore } from "./sqlite-task-store.ts";
import { setWebhookSecret, TriggerRepository } from "./trigger-repository.ts";
import { WorkerHealthRepository } from "./worker-health-repository.ts";

/** The task repository as the rest of the plugin sees it: the core's port, plus retention. */
export type TaskRepository = TaskStore & { purgeOlderThan(cutoffMs: number): number };

/**
 * The plugin's database: one connection, migrated when opened, and one repository per table
 * family, each scoped to the project (the command inbox and the project list span projects).
 * They share the connection, so a write of one joins another's transaction (a run row written in
 * a settle listener commits with the settle). Consumers get repositories; the connection never
 * leaves src/store.
 */
export class Store {
  /** This plugin instance in every claim it takes (core/claims.ts: host, pid, nonce). */
  readonly holder = newClaimer();
  readonly tasks: TaskRepository;
  readonly evidence: SqliteEvidenceStore;
  readonly automations: AutomationRepository;
  /** Event triggers' state and notes, their leases, webhooks and webhook deliveries. */
  readonly triggers: TriggerRepository;
  readonly proposals: ProposalRepository;
  readonly channelOutbox: ChannelOutboxRepository;
  readonly commands: CommandRepository;
  readonly workerHealth: WorkerHealthRepository;
  readonly projects: ProjectRepository;
  private readonly taskStore: SqliteTaskStore;
  private readonly dataVersionStatement: SqliteStatement;

  /** Creates the folder and the file when missing, and migrates. Throws StoreUnavailableError. */
  static open({ path, projectId }: { path: string; projectId: string }): Store {
    return new Store(openDatabase(path, { create: true }), projectId);
  }

  private constructor(private readonly db: SqliteDatabase, readonly projectId: string) {
    this.taskStore = new SqliteTaskStore(db, projectId);
    this.tasks = this.taskStore;
    this.evidence = new SqliteEvidenceStore(db, projectId);
    this.automations = new AutomationRepository(db, projectId);
    this.triggers = new TriggerRepository(db, projectId);
    this.proposals = new ProposalRepository(db, projectId);
    this.channelOutbox = new ChannelOutboxRepository(db, projectId, this.holder);
    this.commands = new CommandRepository(db);
    this.workerHealth = new WorkerHealthRepository(db, projectId);
    this.projects = new ProjectRepository(db);
    this.dataVersionStatement = db.prepare("PRAGMA data_version");
  }

  get path(): string {
    return this.db.path;
  }

  /** Changes whenever another connection commits: one pragma, no table read. */
  dataVersion(): number {
    return Number(this.dataVersionStatement.get()?.data_version);
  }

  /** Runs fn as one write transaction over every repository. */
  transaction<T>(fn: () => T): T {
    return this.taskStore.transaction(fn);
  }

  /** Closes the connection (the task cache with it). */
  close(): void {
    this.taskStore.close();
  }
}

/**
 * What the command line and the dashboard write, in any project: commands for a project's plugin
 * and a webhook's secret. Opens only a database the plugin made, and migrates it (an older
 * plugin's file may lack the inbox's newer columns). Throws StoreUnavailableError.
 */
export class SharedStore {
  readonly commands: CommandRepository;

  static open(path: string): SharedStore {
    return new SharedStore(openDatabase(path, { create: false }));
  }

  private constructor(private readonly db: SqliteDatabase) {
    this.commands = new CommandRepository(db);
  }

  /** False when no webhook has that name. */
  setWebhookSecret(name: string, secret: string): boolean {
    return setWebhookSecret(this.db, name, secret);
  }

  close(): void {
    this.db.close();
  }
}
