import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

// Bun, as inside OpenCode: its module cache lists every loaded file, ESM included.
const PROBE = `
const tokenizerLoaded = () => Object.keys(require.cache).some((path) => path.includes("/gpt-tokenizer/"));
await import("./src/index.ts");
const atImport = tokenizerLoaded();
const { countTextTokens } = await import("./src/fork/token-count.ts");
const tokens = countTextTokens("hello world");
console.log(JSON.stringify({ atImport, afterCount: tokenizerLoaded(), tokens }));
`;

test("importing the plugin does not load gpt-tokenizer; the first count does", () => {
  const run = spawnSync("npx", ["bun", "-e", PROBE], { cwd: ROOT, encoding: "utf8" });
  assert.equal(run.status, 0, run.stderr);
  const seen = JSON.parse(run.stdout.trim().split("\n").at(-1)!);
  assert.deepEqual(seen, { atImport: false, afterCount: true, tokens: 2 });
});
