#!/usr/bin/env node
// The CLI is TypeScript; tsx compiles it on the fly, so tsx must be a runtime dependency.
let register;
try {
  ({ register } = await import("tsx/esm/api"));
} catch (error) {
  process.stderr.write(`opencode-background-tasks needs the tsx package to run: ${error.message}\n`);
  process.exit(1);
}
register();
const { main } = await import("../src/cli/main.ts");
process.exitCode = main(process.argv.slice(2));
