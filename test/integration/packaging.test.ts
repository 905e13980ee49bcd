/**
 * The package as a user gets it: `npm pack`, installed from the tarball into an empty folder
 * without dev dependencies, then its CLI run under plain Node and its plugin loaded by a real
 * `opencode serve`.
 */
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startStack, call, taskIdsIn, toolOutputs, waitUntil, pluginDbPath, PACKAGE_DIR, type Stack } from "../harness/plugin-stack.ts";

/** Dev dependencies and build tools, none of which a user needs at run time. */
const DEV_ONLY = /node_modules\/(tsx|esbuild|@esbuild\/[^/]+|typescript|bun|opencode-ai|@types\/[^/]+)$/;

describe("the packed package, installed from its tarball", () => {
  let root: string;
  let app: string;
  let installed: string;

  before(() => {
    root = mkdtempSync(join(tmpdir(), "ocbt-pack-"));
    npm(["pack", "--pack-destination", root], PACKAGE_DIR);
    const tarball = readdirSync(root).find((name) => name.endsWith(".tgz"));
    assert.ok(tarball, "npm pack wrote no tarball");
    app = join(root, "app");
    mkdirSync(app);
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", private: true }));
    // better-sqlite3 has no prebuilt binary for this machine and compiles for ~2 minutes. Its own
    // build is not what is tested here: skip install scripts, pin the version this checkout has
    // built, and copy that build's native binding in.
    const sqlite = JSON.parse(readFileSync(join(PACKAGE_DIR, "node_modules/better-sqlite3/package.json"), "utf8"));
    const flags = ["--omit=dev", "--ignore-scripts", "--prefer-offline", "--no-audit", "--no-fund"];
    npm(["install", join(root, tarball), `better-sqlite3@${sqlite.version}`, ...flags], app);
    const binding = "node_modules/better-sqlite3/build/Release/better_sqlite3.node";
    mkdirSync(join(app, binding, ".."), { recursive: true });
    copyFileSync(join(PACKAGE_DIR, binding), join(app, binding));
    installed = join(app, "node_modules/opencode-errands");
  });

  after(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("installs no build tool and no dev-only package, and ships the CLI as JavaScript with its license", () => {
    const found = packageDirs(join(app, "node_modules")).filter((dir) => DEV_ONLY.test(dir));
    assert.deepEqual(found, []);
    assert.equal(existsSync(join(app, "node_modules/@opencode-ai/sdk/package.json")), true, "the plugin package brings the SDK itself");
    assert.ok(existsSync(join(installed, "dist/bin/main.js")));
    assert.match(readFileSync(join(installed, "LICENSE"), "utf8"), /^MIT License\n\nCopyright \(c\) 2026 opencode-errands contributors/);
    const manifest = JSON.parse(readFileSync(join(installed, "package.json"), "utf8"));
    assert.equal(manifest.engines.node, ">=20");
    assert.equal(manifest.dependencies.tsx, undefined);
    assert.equal(manifest.dependencies["@opencode-ai/sdk"], undefined);
  });

  it("runs `npx opencode-errands --help` under plain Node", () => {
    const help = npx(["--help"], app);
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /^opencode-errands: inspect/);
  });

  describe("loaded into a real opencode serve", () => {
    let stack: Stack;
    before(async () => {
      stack = await startStack({ pluginDir: installed });
    });
    after(async () => {
      await stack?.stop();
    });

    it("launches a task that completes, and the CLI lists it from the plugin's database", async () => {
      const parent = await stack.newSession("parent: installed package");
      await stack.say(parent, call("background_task", { description: "packaged", prompt: "REPLY from the package", agent: "general" }));
      const [out] = await toolOutputs(stack, parent, "background_task");
      const [id] = taskIdsIn(out ?? "");
      assert.ok(id, `no task id in: ${out}`);
      const note = await waitUntil(async () => (await stack.notifications(parent)).find((n) => n.includes(id)), {
        timeoutMs: 15_000,
        what: `notification for ${id}`,
      });
      assert.match(note, /status="completed"/);
      assert.match(note, /from the package/);

      const list = npx(["list", "--json", "--db", pluginDbPath(stack.server)], app);
      assert.equal(list.status, 0, list.stderr);
      const tasks = JSON.parse(list.stdout) as Array<{ id: string; status: string }>;
      assert.deepEqual(tasks.map((t) => [t.id, t.status]), [[id, "completed"]]);
    });
  });
});

/** npm with none of an outer npm run's settings (npm test sets npm_config_* for its children). */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)));
}

function npm(args: string[], cwd: string): void {
  const run = spawnSync("npm", args, { cwd, env: cleanEnv(), encoding: "utf8", timeout: 180_000 });
  assert.equal(run.status, 0, `npm ${args.join(" ")} failed:\n${run.stdout}\n${run.stderr}`);
}

function npx(args: string[], cwd: string) {
  // --no: fail instead of fetching the package when it is not installed here; "--" keeps --help for the CLI.
  return spawnSync("npx", ["--no", "--", "opencode-errands", ...args], { cwd, env: cleanEnv(), encoding: "utf8", timeout: 60_000 });
}

/** Every installed package directory under a node_modules folder, nested ones included. */
function packageDirs(nodeModules: string): string[] {
  if (!existsSync(nodeModules)) return [];
  const dirs: string[] = [];
  for (const name of readdirSync(nodeModules)) {
    if (name.startsWith(".")) continue;
    const names = name.startsWith("@") ? readdirSync(join(nodeModules, name)).map((n) => `${name}/${n}`) : [name];
    for (const pkg of names) {
      const dir = join(nodeModules, pkg);
      dirs.push(dir, ...packageDirs(join(dir, "node_modules")));
    }
  }
  return dirs;
}
