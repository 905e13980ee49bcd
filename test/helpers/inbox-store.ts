import { newClaimer } from "../../src/core/claims.ts";
import { CommandRepository } from "../../src/store/command-repository.ts";
import type { SqliteDatabase } from "../../src/store/sqlite-driver.ts";
import type { Store } from "../../src/store/store.ts";

/** What an InboxApplier needs of a Store, on a test's own connection. */
export function inboxStore(db: SqliteDatabase, projectId: string): Pick<Store, "commands" | "dataVersion" | "projectId" | "holder"> {
  const dataVersion = db.prepare("PRAGMA data_version");
  return { commands: new CommandRepository(db), dataVersion: () => Number(dataVersion.get()?.data_version), projectId, holder: newClaimer() };
}
