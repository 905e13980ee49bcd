/**
 * The README's first command: `npm run demo` must show the main job end to end on the bundled
 * mock model. Runs it as a user would and reads what it prints.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { PACKAGE_DIR } from "../harness/plugin-stack.ts";

test("npm run demo launches a batch, notifies the parent of each result, resumes a task and prints the summary", () => {
  const run = spawnSync("npx", ["tsx", "demo/run.ts"], { cwd: PACKAGE_DIR, encoding: "utf8", timeout: 120_000 });
  const out = (run.stdout ?? "") + (run.stderr ?? "");
  assert.equal(run.status, 0, out);
  assert.match(out, /parent notified about task A completed -> delivered quietly, no parent turn/);
  assert.match(out, /parent notified about task B completed -> started a parent turn/);
  assert.match(out, /resume launched: Resumed background task ses_\w+ \(resume #1\)/);
  assert.match(out, /3 notifications reached the parent; 2 of them started a parent turn\./);
});
