import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { tool } from "@opencode-ai/plugin";
import { automationFixture, tempDb } from "../helpers/automation-fixture.ts";
import { buildTools, TOOL_NAMES, AUTOMATION_TOOL_NAMES } from "../../src/tools/build-tools.ts";
import { DEFAULT_OPTIONS } from "../../src/options/options.ts";
import { builtAutomations } from "../../src/automations/automation-access.ts";

/** Every model request carries every tool definition: the plugin's share has a budget. */
export const TOOL_DEFINITIONS_BUDGET_CHARS = 8000;

const WORKERS = { workers: [{ name: "box", url: "http://127.0.0.1:1", username: "opencode", directory: "/srv/repo", capacity: 4 }] };

describe("tool definitions as the model receives them", () => {
  for (const [label, extra] of [["", {}], [" with workers configured (worker is then shown)", WORKERS]] as const) it(`all of the plugin's tools together stay within ${TOOL_DEFINITIONS_BUDGET_CHARS} characters${label}`, () => {
    const db = tempDb();
    const f = automationFixture(db.path);
    after(() => { f.close(); db.cleanup(); });
    const tools = buildTools({ manager: f.manager, clock: f.clock, options: { ...DEFAULT_OPTIONS, ...extra } as never, onCrash: () => {}, automations: builtAutomations(f.automations) });
    assert.deepEqual(Object.keys(tools).sort(), [...TOOL_NAMES, ...AUTOMATION_TOOL_NAMES].sort());
    // What OpenCode 1.18.33 sends per tool, as the mock model received it: the function wrapper,
    // name, description and the arguments' JSON schema in its input form.
    const sizes = Object.entries(tools).map(([name, t]) => {
      const parameters = tool.schema.toJSONSchema(tool.schema.object(t.args), { io: "input" });
      return [name, JSON.stringify({ type: "function", function: { name, description: t.description, parameters } }).length] as const;
    });
    const total = sizes.reduce((sum, [, n]) => sum + n, 0);
    console.log(`tool definitions${label}: ${total} characters (${sizes.map(([n, c]) => `${n} ${c}`).join(", ")})`);
    assert.ok(total <= TOOL_DEFINITIONS_BUDGET_CHARS, `${total} characters > ${TOOL_DEFINITIONS_BUDGET_CHARS}`);
    assert.ok(total > 3000, "the measure counts schemas and descriptions");
    const shown = Object.values(tools).some((t) => "worker" in t.args);
    assert.equal(shown, label !== "", "worker is shown only when workers are configured");
  });
});
