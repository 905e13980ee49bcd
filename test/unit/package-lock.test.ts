import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
// @ts-expect-error: a plain .mjs script without types
import { missingPlatformEntries } from "../../scripts/lock-platforms.mjs";

describe("package-lock.json", () => {
  it("lists every platform package of opencode-ai, so `npm ci` accepts it (run scripts/lock-platforms.mjs if not)", () => {
    const lock = JSON.parse(readFileSync(new URL("../../package-lock.json", import.meta.url), "utf8"));
    assert.deepEqual(Object.keys(missingPlatformEntries(lock)), []);
  });
});
