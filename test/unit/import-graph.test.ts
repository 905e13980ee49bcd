import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

// The layering of src/ (runtime imports; `import type` is free):
//   index.ts -> plugin.ts (the one composition root) -> features -> store -> core; host is the SDK seam.
// core imports nothing at runtime; store imports only core (no feature folder, whatever its name); cli and dashboard are never a cycle:
// the CLI is its own composition root and may start the dashboard (`dashboard` command), while the
// dashboard never imports the CLI.

const SRC = fileURLToPath(new URL("../../src/", import.meta.url));
const ROOT_FILES = ["index.ts", "plugin.ts"];
const ROOT = "(root)";

type Edge = { from: string; to: string; file: string; target: string };

/** The specifiers a file imports at runtime: static, re-exports, side-effect and dynamic imports; type-only ones left out. */
function runtimeImports(source: string): string[] {
  const text = source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
  const specs: string[] = [];
  for (const m of text.matchAll(/^\s*(import|export)\s+(type\s+)?([^;]*?)\s+from\s+["']([^"']+)["']/gm)) {
    if (m[2]) continue;
    const names = m[3].replace(/[{}]/g, "").split(",").map((s) => s.trim()).filter(Boolean);
    if (m[3].includes("{") && names.length > 0 && names.every((n) => n.startsWith("type "))) continue;
    specs.push(m[4]);
  }
  for (const m of text.matchAll(/^\s*import\s+["']([^"']+)["']/gm)) specs.push(m[1]);
  for (const m of text.matchAll(/import\(\s*["']([^"']+)["']\s*\)/g)) specs.push(m[1]);
  return specs;
}

/** The relative ones: imports of the project's own files. */
const runtimeSpecifiers = (source: string) => runtimeImports(source).filter((s) => s.startsWith("."));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return /\.(ts|mts|js|mjs)$/.test(e.name) && !e.name.endsWith(".d.ts") ? [path] : [];
  });
}

const folderOf = (file: string) => {
  const parts = relative(SRC, file).split(sep);
  return parts.length > 1 ? parts[0] : ROOT;
};

/** Every runtime import of src/ that crosses a top-level folder. */
function folderEdges(): Edge[] {
  return sourceFiles(SRC).flatMap((file) =>
    runtimeSpecifiers(readFileSync(file, "utf8")).flatMap((spec) => {
      const target = resolve(dirname(file), spec);
      const from = folderOf(file), to = folderOf(target);
      return from === to ? [] : [{ from, to, file: relative(SRC, file), target: relative(SRC, target) }];
    }),
  );
}

/** The strongly connected groups of more than one folder (Tarjan). */
function folderCycles(edges: Edge[]): string[][] {
  const next = new Map<string, Set<string>>();
  for (const e of edges) next.set(e.from, (next.get(e.from) ?? new Set()).add(e.to));
  const nodes = new Set(edges.flatMap((e) => [e.from, e.to]));
  const index = new Map<string, number>(), low = new Map<string, number>(), stack: string[] = [], onStack = new Set<string>();
  const cycles: string[][] = [];
  let counter = 0;
  const visit = (v: string) => {
    index.set(v, counter); low.set(v, counter); counter++;
    stack.push(v); onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) { visit(w); low.set(v, Math.min(low.get(v)!, low.get(w)!)); }
      else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const group: string[] = [];
    let w: string;
    do { w = stack.pop()!; onStack.delete(w); group.push(w); } while (w !== v);
    if (group.length > 1) cycles.push(group.sort());
  };
  for (const v of nodes) if (!index.has(v)) visit(v);
  return cycles;
}

const show = (edges: Edge[]) => edges.map((e) => `${e.file} -> ${e.target}`).join("\n");

describe("the runtime import graph of src/", () => {
  const edges = folderEdges();

  it("reads runtime imports and leaves type-only ones out", () => {
    const source = [
      `import type { A } from "../a/type-only.ts";`,
      `import { type B, type C } from "../a/all-types.ts";`,
      `import { type D, value } from "../b/mixed.ts";`,
      `export { e } from "../c/re-export.ts";`,
      `export type { F } from "../a/type-re-export.ts";`,
      `import "../d/side-effect.ts";`,
      `const lazy = () => import("../e/lazy.ts");`,
      `// import { g } from "../a/commented.ts";`,
      `/* import { h } from "../a/block-comment.ts"; */`,
      `import {\n  i,\n  j,\n} from "../f/multi-line.ts";`,
      `import { readFileSync } from "node:fs";`,
    ].join("\n");
    assert.deepEqual(runtimeSpecifiers(source).sort(), [
      "../b/mixed.ts", "../c/re-export.ts", "../d/side-effect.ts", "../e/lazy.ts", "../f/multi-line.ts",
    ]);
    assert.deepEqual(folderCycles([
      { from: "a", to: "b", file: "a/x.ts", target: "b/y.ts" },
      { from: "b", to: "a", file: "b/y.ts", target: "a/x.ts" },
      { from: "b", to: "c", file: "b/y.ts", target: "c/z.ts" },
    ]), [["a", "b"]]);
  });

  it("has no cycle between folders", () => {
    const cycles = folderCycles(edges);
    const within = (group: string[]) => edges.filter((e) => group.includes(e.from) && group.includes(e.to));
    assert.deepEqual(cycles, [], cycles.map((c) => `cycle ${c.join(", ")}:\n${show(within(c))}`).join("\n\n"));
  });

  it("store imports no feature folder (only core)", () => {
    const wrong = edges.filter((e) => e.from === "store" && e.to !== "core");
    assert.deepEqual(show(wrong), "");
  });

  it("core imports nothing at runtime (host types only)", () => {
    assert.deepEqual(show(edges.filter((e) => e.from === "core")), "");
  });

  it("worktrees imports no other folder (git through execFile only; core and store never import it)", () => {
    const wrong = edges.filter((e) => e.from === "worktrees" || (e.to === "worktrees" && (e.from === "core" || e.from === "store")));
    assert.deepEqual(show(wrong), "");
  });

  it("cli and dashboard do not import each other", () => {
    const wrong = edges.filter((e) => (e.from === "cli" && e.to === "dashboard") || (e.from === "dashboard" && e.to === "cli"));
    assert.deepEqual(show(wrong), "");
  });

  it("no folder imports a file at the root of src/", () => {
    const wrong = edges.filter((e) => e.to === ROOT);
    assert.deepEqual(show(wrong), "");
  });

  it("only host/ imports the OpenCode SDK at runtime (it is the SDK seam)", () => {
    const wrong = sourceFiles(SRC).filter((file) => folderOf(file) !== "host")
      .filter((file) => runtimeImports(readFileSync(file, "utf8")).some((spec) => spec.startsWith("@opencode-ai/sdk")))
      .map((file) => relative(SRC, file));
    assert.deepEqual(wrong, []);
  });

  it("the root of src/ holds only index.ts and plugin.ts", () => {
    const atRoot = readdirSync(SRC, { withFileTypes: true }).filter((e) => e.isFile()).map((e) => e.name).sort();
    assert.deepEqual(atRoot, ROOT_FILES);
  });
});
