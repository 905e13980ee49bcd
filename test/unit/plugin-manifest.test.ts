import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as entry from "../../src/index.ts";
import { DEFAULT_OPTIONS } from "../../src/options/options.ts";

const manifest = JSON.parse(readFileSync(new URL("../../plugin.json", import.meta.url), "utf8"));
const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));

const silentClient = new Proxy({}, { get: () => new Proxy({}, { get: () => async () => ({ data: [] }) }) });

async function loadHooks(options?: unknown) {
  const input = { client: silentClient, project: {}, directory: "/tmp", worktree: "/tmp", serverUrl: new URL("http://x"), $: {} };
  return entry.default.server(input as never, options as never);
}

describe("plugin.json", () => {
  it("names exactly the tools the plugin registers", async () => {
    const hooks = await loadHooks();
    assert.deepEqual(Object.keys(hooks.tool ?? {}).sort(), manifest.tools.map((t: { name: string }) => t.name).sort());
  });

  it("lists every option with the default the plugin uses", () => {
    const fromManifest = Object.fromEntries(manifest.options.map((o: { name: string; default: unknown }) => [o.name, o.default]));
    assert.deepEqual(fromManifest, { ...DEFAULT_OPTIONS });
  });

  it("agrees with package.json on name, version, entry and engines", () => {
    assert.equal(manifest.name, pkg.name);
    assert.equal(manifest.version, pkg.version);
    assert.equal(manifest.entry, pkg.main);
    // The manifest names the host the plugin runs in; package.json's engines.node is for the CLI.
    assert.deepEqual(manifest.engines, { opencode: pkg.engines.opencode });
  });

  it("the entry exports only a plugin module", () => {
    assert.deepEqual(Object.keys(entry), ["default"]);
    assert.equal(typeof entry.default.server, "function");
  });

  it("with bad options still loads, and every tool answers with the problem", async () => {
    const hooks = await loadHooks({ pollIntervalMs: -1 });
    const out = await hooks.tool!.background_list.execute({} as never, {} as never);
    assert.match(String(out), /unavailable: .*"pollIntervalMs" must be a number of ms from 100 to 60000, got -1/);
  });
});
