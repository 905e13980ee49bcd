import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, it } from "node:test";

const SRC = join(import.meta.dirname, "../../src");

/** The connection and what makes one: only src/store may import these (types included). */
const CONNECTION = ["sqlite-driver", "better-sqlite-driver", "bun-sqlite-driver", "migrations", "open-database", "statement-cache", "sqlite-task-store"];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : []));
}

describe("the store boundary", () => {
  it("no raw database handle leaves src/store: nothing outside it imports the driver, the migrations or the task store's class", () => {
    const offenders: string[] = [];
    for (const file of sourceFiles(SRC)) {
      const path = relative(SRC, file);
      if (path.startsWith("store/")) continue;
      for (const [, spec] of readFileSync(file, "utf8").matchAll(/from\s+"([^"]+)"/g)) {
        const name = /(?:^|\/)store\/([\w-]+)\.ts$/.exec(spec!)?.[1];
        if (name && CONNECTION.includes(name)) offenders.push(`${path} -> store/${name}.ts`);
      }
    }
    assert.deepEqual(offenders, [], "consumers get repositories from Store (store/store.ts), or SharedStore for the CLI and dashboard");
  });
});
