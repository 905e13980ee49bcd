import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bashPatterns } from "../../src/approval/bash-patterns.ts";
import { startedAutomations, PARENT, MODEL } from "../helpers/automation-fixture.ts";
import { automationTools } from "../../src/tools/build-tools.ts";

/**
 * The plugin judges a command with the bash grammar but runs it with /bin/sh (dash on Debian).
 * Where the two read a command differently, the grammar must not see less than sh runs: each
 * input here made /bin/sh create a file while the grammar saw no command, or only an allowed one.
 */
describe("bash-only syntax that /bin/sh reads differently is refused (issue 22 item 2)", () => {
  const dir = mkdtempSync(join(tmpdir(), "sh-gap-"));
  const cases: [string, string][] = [
    ["[[ -n a || touch FILE ]]", "[[ … ]] is not POSIX sh: sh runs `touch` inside it, the grammar sees a test"],
    ["(( touch FILE ))", "(( … )) is nested subshells to sh, arithmetic to the grammar"],
    ["git status &> /dev/null touch FILE", "&> is `&` then `>` to sh: `touch` runs; the grammar sees one git command"],
    ["git status &>> /dev/null touch FILE", "the same with &>>"],
    ["git log `git \\`touch FILE\\``", "nested backticks: the grammar sees `git \\`touch …\\`` (allowed by \"git *\"), sh runs touch"],
    ["git status ${x:-`touch FILE`}", "a backtick inside ${…} is left unparsed by the grammar"],
    ["git log <<EOF\n`touch FILE`\nEOF", "a backtick in an unquoted here-document is left unparsed by the grammar"],
  ];
  for (const [template, why] of cases) {
    it(`${template}: ${why}`, async () => {
      const file = join(dir, `f${cases.findIndex(([t]) => t === template)}`);
      const command = template.replace("FILE", file);
      spawnSync("/bin/sh", ["-c", command], { cwd: dir, stdio: "ignore" });
      const shRunsIt = existsSync(file);
      const judged = await bashPatterns(command);
      // Either the grammar sees the touch, or the command is refused (undefined); never a silent pass.
      const seen = judged?.patterns.some((p) => p.startsWith("touch ")) ?? true;
      assert.ok(!shRunsIt || seen, `/bin/sh ran touch but the patterns were ${JSON.stringify(judged)}`);
      assert.equal(judged, undefined);
    });
  }

  it("POSIX forms of the same still pass and are judged part by part", async () => {
    assert.deepEqual(await bashPatterns("[ -n a ] || touch x"), { patterns: ["touch x"], always: ["touch *"] });
    assert.deepEqual(await bashPatterns("git status > /dev/null 2>&1; echo $((1 + 2))"), { patterns: ["git status > /dev/null 2>&1", "echo $((1 + 2))"], always: ["git status *", "echo *"] });
    for (const literal of ["cat <<'EOF'\n$(x) `y`\nEOF", "echo '$(x) `y`'", 'echo "\\$(x) \\`y\\`"']) {
      assert.deepEqual((await bashPatterns(literal))?.patterns.length, 1, literal);
    }
  });
});

/** The "always" prefixes are OpenCode 1.18.33's (its BashArity table, read from the binary): never wider. */
describe("always prefixes as OpenCode 1.18.33 derives them", () => {
  const cases: [string, string][] = [
    ["docker image rm foo", "docker image rm *"],
    ["kubectl rollout restart deploy/x", "kubectl rollout restart *"],
    ["systemctl stop nginx", "systemctl stop *"],
    ["az vm delete --name x", "az vm delete *"],
    ["brew install jq", "brew install *"],
    ["npm view left-pad version", "npm view left-pad *"],
    ["terraform workspace delete prod", "terraform workspace delete *"],
    ["vault kv put secret/x a=b", "vault kv put *"],
    ["git push origin main", "git push *"],
    ["touch a b", "touch *"],
    ["unknowncmd sub arg", "unknowncmd *"],
  ];
  for (const [command, always] of cases) {
    it(`${command} -> ${always}`, async () => {
      assert.deepEqual((await bashPatterns(command))?.always, [always]);
    });
  }
});

describe("'always' for background_automation is never a wildcard the model wrote", () => {
  it("a title with * or ? is not offered as an always rule (OpenCode's match has no escape: \"*\" would approve every later automation)", async () => {
    const f = startedAutomations();
    const tools = automationTools(f.automations, () => {});
    const asked: { permission: string; always: string[] }[] = [];
    const call = (args: unknown) => tools.task_create!.execute(args as never, {
      sessionID: PARENT, messageID: "msg_1", agent: "build", abort: new AbortController().signal,
      extra: { model: { id: MODEL.modelID, providerID: MODEL.providerID } },
      ask: async (input: { permission: string; always: string[] }) => { asked.push(input); },
    } as never);
    await call({ title: "*", prompt: "look at CI" });
    await call({ title: "nightly ?", prompt: "look at CI" });
    const always = asked.filter((a) => a.permission === "background_automation").flatMap((a) => a.always);
    assert.deepEqual(always.filter((rule) => /[*?]/.test(rule)), []);
  });
});
