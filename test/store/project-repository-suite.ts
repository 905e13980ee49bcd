import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { projectDirectory, ProjectRepository } from "../../src/store/project-repository.ts";
import { SqliteTaskStore } from "../../src/store/sqlite-task-store.ts";
import type { TestApi } from "./suite-support.ts";

/** The projects table (migration 9) under whichever driver the runtime picks. */
export function defineProjectRepositorySuite({ describe, it }: TestApi): void {
  describe("project directories", () => {
    it("one row per project: the last plugin loaded sets the directory and when it was seen", () => {
      const dir = mkdtempSync(join(tmpdir(), "obt-projects-"));
      const store = SqliteTaskStore.open({ path: join(dir, "tasks.db"), projectId: "p1" });
      try {
        const projects = new ProjectRepository(store.db);
        projects.record("p1", "/work/a", 1);
        projects.record("p2", "/work/b", 2);
        projects.record("p1", "/work/a-worktree", 3);
        const rows = store.db.prepare("SELECT project_id, directory, last_seen_at FROM projects ORDER BY project_id").all();
        assert.deepEqual(rows.map((r) => [r.project_id, r.directory, Number(r.last_seen_at)]), [["p1", "/work/a-worktree", 3], ["p2", "/work/b", 2]]);
      } finally {
        store.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it("the directory is the git worktree, or the directory when outside git (worktree '/')", () => {
      assert.equal(projectDirectory({ directory: "/repo/sub", worktree: "/repo" }), "/repo");
      assert.equal(projectDirectory({ directory: "/tmp/plain", worktree: "/" }), "/tmp/plain");
      assert.equal(projectDirectory({ directory: "/tmp/plain" }), "/tmp/plain");
    });
  });
}
