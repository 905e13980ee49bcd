import { CommandRepository } from "./command-repository.ts";
import { openDatabase } from "./open-database.ts";
import type { SqliteDatabase } from "./sqlite-driver.ts";
import { setWebhookSecret } from "./trigger-repository.ts";

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
