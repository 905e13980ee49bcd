import { tool } from "@opencode-ai/plugin";
import { automationFixture, tempDb } from "/work/main/test/helpers/automation-fixture.ts";
import { buildTools } from "/work/main/src/tools/build-tools.ts";
import { DEFAULT_OPTIONS } from "/work/main/src/options.ts";
const db = tempDb(); const f = automationFixture(db.path);
const tools = buildTools({ manager: f.manager, clock: f.clock, options: DEFAULT_OPTIONS, onCrash: () => {}, automations: f.service });
for (const n of process.argv.slice(2)) { const t = tools[n]!; console.log(n, JSON.stringify({ type: "function", function: { name: n, description: t.description, parameters: tool.schema.toJSONSchema(tool.schema.object(t.args), { io: "input" }) } })); }
f.close(); db.cleanup(); process.exit(0);
