import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
const declared = (...fields: string[]) => new Set(fields.flatMap((f) => Object.keys(pkg[f] ?? {})));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

/** The package a bare specifier names ("@scope/name/sub" -> "@scope/name"); undefined for relative and built-in ones. */
function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith(".") || /^(node|bun):/.test(specifier)) return undefined;
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

/** Packages src/ imports, split by whether the import survives compilation (a value) or not (types only). */
function importsOfSrc(): { values: Map<string, string>; types: Map<string, string> } {
  const values = new Map<string, string>();
  const types = new Map<string, string>();
  for (const file of sourceFiles(join(ROOT, "src"))) {
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/^(?:import|export)\s+(type\s+)?[^;]*?\sfrom\s+"([^"]+)"/gm)) {
      const name = packageOf(m[2]);
      if (name) (m[1] ? types : values).set(name, file);
    }
    for (const m of text.matchAll(/(?:\brequire|\bimport)\(\s*"([^"]+)"\s*\)/g)) {
      const name = packageOf(m[1]);
      // `typeof import("x")` in a type position is a type.
      if (name) (text.slice(Math.max(0, m.index! - 7), m.index).includes("typeof") ? types : values).set(name, file);
    }
  }
  return { values, types };
}

describe("package.json dependencies", () => {
  it("declares every package src/ imports at run time as a dependency (better-sqlite3 as optional)", () => {
    const runtime = declared("dependencies", "optionalDependencies");
    const missing = [...importsOfSrc().values].filter(([name]) => !runtime.has(name)).map(([name, file]) => `${name} (${file})`);
    assert.deepEqual(missing, []);
  });

  it("declares every package src/ imports only for types, at least as a dev dependency", () => {
    const any = declared("dependencies", "optionalDependencies", "devDependencies");
    const missing = [...importsOfSrc().types].filter(([name]) => !any.has(name)).map(([name, file]) => `${name} (${file})`);
    assert.deepEqual(missing, []);
  });

  it("needs no build tool at run time", () => {
    const runtime = declared("dependencies", "optionalDependencies");
    assert.deepEqual(["tsx", "esbuild", "typescript", "bun"].filter((name) => runtime.has(name)), []);
  });
});
