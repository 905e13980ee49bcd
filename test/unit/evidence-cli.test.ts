import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { main } from "../../src/cli/main.ts";
import { SqliteTaskStore } from "../../src/store/sqlite-task-store.ts";
import { SqliteEvidenceStore } from "../../src/store/sqlite-evidence-store.ts";
import { runningTask } from "../store/task-fixtures.ts";

describe("CLI show with evidence", () => {
  it("lists every run's files, commands and failed tools, and --json carries them", () => {
    const dir = mkdtempSync(join(tmpdir(), "obt-evidence-cli-"));
    try {
      const db = join(dir, "tasks.db");
      const store = SqliteTaskStore.open({ path: db, projectId: "proj" });
      store.save(runningTask("ses_ev1", { status: "completed", result: "done", resumeCount: 1, settledAt: 2 }));
      const evidence = new SqliteEvidenceStore(store.db, "proj");
      evidence.put({ taskId: "ses_ev1", run: 0, kind: "file", key: "report.md", data: { path: "report.md", actions: { created: 1 }, tools: { write: 1 }, seq: 1, check: { verdict: "verified", exists: true, size: 2150, sha256: "ab".repeat(32), basis: "before-write" } } });
      evidence.put({ taskId: "ses_ev1", run: 0, kind: "command", key: "c1", data: { callID: "c1", command: "npm test", exitCode: 1, durationMs: 1500, seq: 2 } });
      evidence.put({ taskId: "ses_ev1", run: 1, kind: "failure", key: "c2", data: { callID: "c2", tool: "edit", error: "oldString not found", seq: 1 } });
      store.close();
      let stdout = "";
      const io = { stdout: (t: string) => void (stdout += t), stderr: (t: string) => void (stdout += t), env: {}, now: () => 10 };
      assert.equal(main(["show", "ses_ev1", "--db", db], io), 0, stdout);
      assert.match(stdout, /Evidence of run 0 \(first run\):\n  Files:\n    report\.md — created \(write 1x\); exists, 2\.1 KB, sha256 abababababab…; verified/);
      assert.match(stdout, /npm test — exit 1, 1\.5 s/);
      assert.match(stdout, /Evidence of run 1 \(resume #1\):\n  Files: none\n  Commands: none\n  Failed tools:\n    edit: oldString not found/);
      stdout = "";
      assert.equal(main(["show", "ses_ev1", "--db", db, "--json"], io), 0);
      assert.deepEqual(JSON.parse(stdout).evidence.map((r: { run: number; files: unknown[] }) => [r.run, r.files.length]), [[0, 1], [1, 0]]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
