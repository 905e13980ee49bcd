import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Automation } from "../../src/automations/automation.ts";
import { parseSteps } from "../../src/automations/step-spec.ts";
import { definitionRows } from "../../src/proposals/proposal-definition.ts";
import { proposalVersion } from "../../src/proposals/proposal-version.ts";

const a: Automation = {
  id: "au1", title: "nightly", prompt: "Fix what failed.", steps: parseSteps([{ name: "test", run: "npm test", retries: 2, retry_delay: "30s" }]),
  agent: "general", notify: "on_change", sessionMode: "fresh", overlap: "skip", catchUp: "skip", reportTo: "ses_1", reportAgent: "build",
  enabled: false, createdBy: "ses_1", createdAt: 1, updatedAt: 1, runCount: 0, consecutiveFailures: 0,
  proposal: { reason: "keeps main green", proposedAt: 1, by: "conversation" },
};

describe("prompt_when and retries where a proposal is shown for approval", () => {
  it("the prompt row says when the model runs; a step row its retries", () => {
    const rows = new Map(definitionRows(a, []).map((r) => [r.label, r]));
    assert.deepEqual(rows.get("Prompt"), { label: "Prompt", text: "runs only when a step fails (prompt_when failure); otherwise no model runs", exact: ["Fix what failed."] });
    assert.equal(new Map(definitionRows({ ...a, promptWhen: "always" }, []).map((r) => [r.label, r.text])).get("Prompt"), "runs after the steps, every run (prompt_when always)");
    assert.equal(rows.get("Step 1")!.text, "test: sh -c in the project, timeout 5m, tried 2 more time(s) 30s apart when it fails");
    assert.equal(new Map(definitionRows({ ...a, steps: undefined }, []).map((r) => [r.label, r.text])).get("Prompt"), undefined, "no steps: the prompt always runs, nothing to say");
  });

  it("a proposal changed to prompt_when always is another version (an approval of the one looked at is refused)", () => {
    assert.notEqual(proposalVersion(a, []), proposalVersion({ ...a, promptWhen: "always" }, []));
    assert.equal(proposalVersion(a, []), proposalVersion({ ...a, promptWhen: undefined }, []));
  });
});
