import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TaskStore } from "../../src/core/task-store.ts";

/** describe/it as both node:test and bun:test provide them. */
export type TestApi = {
  describe: (name: string, fn: () => void) => unknown;
  it: (name: string, fn: () => void | Promise<void>) => unknown;
};

export type StoreLocation = { file: string; projectId: string };
export type MakeStore = (location: StoreLocation) => TaskStore;

export type Workspace = {
  dir: string;
  /** The database file every store opens unless told another. */
  file: string;
  open(projectId?: string, file?: string): TaskStore;
};

/** A temporary folder whose stores are all closed, and the folder removed, after fn. */
export function inWorkspace(makeStore: MakeStore, fn: (ws: Workspace) => void): void {
  const dir = mkdtempSync(join(tmpdir(), "obt-store-"));
  const opened: TaskStore[] = [];
  const ws: Workspace = {
    dir,
    file: join(dir, "data", "tasks.db"),
    open(projectId = "project-a", file = ws.file) {
      const store = makeStore({ file, projectId });
      opened.push(store);
      return store;
    },
  };
  try {
    fn(ws);
  } finally {
    for (const store of opened) store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
