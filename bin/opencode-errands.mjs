#!/usr/bin/env node
// The packed package ships the CLI compiled to JavaScript (dist/, built when packing). A source
// checkout has no dist/: there the TypeScript sources run through tsx, a dev dependency.
import { existsSync } from "node:fs";

const compiled = new URL("../dist/bin/main.js", import.meta.url);
let main;
if (existsSync(compiled)) {
  ({ main } = await import(compiled.href));
} else {
  const { register } = await import("tsx/esm/api");
  register();
  ({ main } = await import("../src/bin/main.ts"));
}
process.exitCode = await main(process.argv.slice(2));
