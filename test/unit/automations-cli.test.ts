import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { main } from "../../src/cli/main.ts";
import { automationFixture, tempDb, PARENT } from "../helpers/automation-fixture.ts";

function run(argv: string[], env: Record<string, string> = {}) {
  let stdout = "";
  let stderr = "";
  const code = main(argv, { stdout: (t: string) => void (stdout += t), stderr: (t: string) => void (stderr += t), env } as never);
  return { code, stdout, stderr };
}

describe("CLI: automations and runs", () => {
  const db = tempDb();
  after(() => db.cleanup());
  let id = "";

  it("lists automations with state, triggers and next run; --json for machines", async () => {
    const f = automationFixture(db.path);
    f.host.setActivity(PARENT, "idle");
    f.runs.start();
    id = f.create({ title: "nightly check", notify: "never" }, [{ every: "1m" }]).id;
    const paused = f.create({ title: "on hold" }, [{ cron: "0 9 * * 1-5", timezone: "UTC" }]);
    f.catalog.update(paused.id, { enabled: false });
    await f.clock.advance(60_000);
    f.host.finishRun(f.children()[0]!, "all good\nsecond line");
    await f.flush();
    f.close();

    const table = run(["automations", "--db", db.path]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^ID +TITLE +STATE +TRIGGERS +NEXT RUN +LAST RUN +PROJECT/);
    assert.match(table.stdout, new RegExp(`${id} +nightly check +enabled +every 1m +20\\d\\d-.*Z +#1 completed +proj`));
    assert.match(table.stdout, /on hold +paused +cron 0 9 \* \* 1-5 \(UTC\) +- +- /);
    const json = JSON.parse(run(["automations", "--db", db.path, "--json"]).stdout);
    assert.deepEqual(json.map((a: { title: string }) => a.title), ["nightly check", "on hold"]);
  });

  it("runs <id> prints the history newest first; a bad id says how to find one", () => {
    const out = run(["runs", id.slice(0, 6), "--db", db.path]);
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /^WHEN +RUN +STATUS +DURATION +SPENT +FIRED BY +NOTIFIED +RESULT$/m);
    assert.match(out.stdout, /20\d\d-\S+Z +#1 +completed +\d+\.\ds +- +every 1m, planned \S+ +no: notify: never \(history only\) +all good$/m);
    const json = JSON.parse(run(["runs", id, "--db", db.path, "--json"]).stdout);
    assert.equal(json.runs[0].status, "completed");
    const bad = run(["runs", "au_nope", "--db", db.path]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /No automation has an id starting with 'au_nope'\. Run `opencode-errands automations`/);
    assert.equal(run(["runs", "--db", db.path]).code, 2);
  });
});

describe("CLI: webhooks", () => {
  const db = tempDb();
  after(() => db.cleanup());
  let automationId = "";
  const secretOf = (name: string) => (JSON.parse(run(["webhooks", "--db", db.path, "--show-secret", "--json"]).stdout) as Array<{ name: string; secret: string }>).find((h) => h.name === name)?.secret;

  /** main() with stdin piped (`stdin`), or a terminal that answers `typed` to each hidden prompt. */
  async function setSecret(argv: string[], input: { stdin?: string; typed?: string[]; env?: Record<string, string> }) {
    let stdout = "";
    let stderr = "";
    const prompts: string[] = [];
    const typed = [...(input.typed ?? [])];
    const io = {
      stdout: (t: string) => void (stdout += t), stderr: (t: string) => void (stderr += t), env: input.env ?? {}, now: () => Date.now(),
      ...(input.stdin !== undefined ? { readStdin: async () => input.stdin! } : {}),
      ...(input.typed ? { readSecret: async (q: string) => (prompts.push(q), typed.shift() ?? "") } : {}),
    };
    const code = await main(["webhooks", ...argv, "--db", db.path], io as never);
    return { code, stdout, stderr, prompts };
  }

  it("lists webhooks with their URL; the secret only with --show-secret", () => {
    const loaders = { watch: async () => assert.fail(), command: async () => assert.fail(), github: async () => assert.fail(), webhookListener: async () => async () => ({ listening: false, reason: "test" }) };
    const f = automationFixture(db.path, {}, { loaders: loaders as never });
    automationId = f.create({ title: "deploys" }, [{ webhook: "deploy" }]).id;
    f.close();
    const hidden = run(["webhooks", "--db", db.path]);
    assert.equal(hidden.code, 0, hidden.stderr);
    assert.match(hidden.stdout, new RegExp(`deploy +.*${automationId} deploys +0 +\\(hidden: --show-secret\\)`));
    assert.doesNotMatch(hidden.stdout, /s3cret/);
    assert.match(run(["webhooks", "--db", db.path, "--show-secret"]).stdout, /s3cret-s3cret-s3cret/);
    assert.doesNotMatch(run(["export", "--db", db.path]).stdout, /s3cret/, "export leaves webhook secrets out");
  });

  it("attacker: --show-secret inside an OpenCode tool call (AGENT=1 or OPENCODE=1, as the bash tool sets) is refused and prints no secret; the list without it still works there", () => {
    for (const env of [{ AGENT: "1" }, { OPENCODE: "1" }] as Record<string, string>[]) {
      for (const argv of [["webhooks", "--db", db.path, "--show-secret"], ["webhooks", "--db", db.path, "--show-secret", "--json"]]) {
        const out = run(argv, env);
        assert.equal(out.code, 1, `${JSON.stringify(env)} ${argv.join(" ")}: ${out.stdout}`);
        assert.match(out.stderr, /Not shown: this runs inside an OpenCode tool call \(AGENT or OPENCODE is set\), and a webhook's secret must not pass through the model\. Run `opencode-errands webhooks --show-secret` in your own terminal\./);
        assert.doesNotMatch(out.stdout + out.stderr, /s3cret/);
      }
      const list = run(["webhooks", "--db", db.path], env);
      assert.equal(list.code, 0, list.stderr);
      assert.match(list.stdout, /\(hidden: --show-secret\)/);
    }
  });

  it("set-secret <name> reads the new secret from stdin, never from the command line, and never prints it", async () => {
    const piped = await setSecret(["set-secret", "deploy"], { stdin: "whsec_from-a-pipe-0123456789\n" });
    assert.equal(piped.code, 0, piped.stderr);
    assert.match(piped.stdout, /^Webhook deploy: the new secret is set \(28 characters\)\. Deliveries signed with the old one are refused \(401\) from now on\./);
    assert.doesNotMatch(piped.stdout + piped.stderr, /from-a-pipe/);
    assert.equal(secretOf("deploy"), "whsec_from-a-pipe-0123456789", "the trailing newline is not part of it");
    const argv = await setSecret(["set-secret", "deploy", "whsec_on-the-command-line"], { stdin: "" });
    assert.equal(argv.code, 2);
    assert.match(argv.stderr, /read from stdin.*never on the command line.*shell history/);
    assert.equal(secretOf("deploy"), "whsec_from-a-pipe-0123456789");
  });

  it("on a terminal it asks twice without echo; a mismatch changes nothing", async () => {
    const typed = await setSecret(["set-secret", "deploy"], { typed: ["typed-secret-0123456789", "typed-secret-0123456789"] });
    assert.equal(typed.code, 0, typed.stderr);
    assert.deepEqual(typed.prompts, ["New secret for webhook deploy (at least 16 characters, not shown): ", "The same again: "]);
    assert.equal(secretOf("deploy"), "typed-secret-0123456789");
    const mismatch = await setSecret(["set-secret", "deploy"], { typed: ["typed-secret-AAAAAAAAAA", "typed-secret-BBBBBBBBBB"] });
    assert.equal(mismatch.code, 1);
    assert.match(mismatch.stderr, /did not match; nothing was changed/);
    assert.equal(secretOf("deploy"), "typed-secret-0123456789");
  });

  it("refuses a short secret, an unknown name and a call from inside OpenCode, changing nothing", async () => {
    const cases: Array<[string[], Parameters<typeof setSecret>[1], number, RegExp]> = [
      [["set-secret", "deploy"], { stdin: "too-short\n" }, 1, /at least 16 characters \(got 9\)/],
      [["set-secret", "deploy"], { stdin: "with\u0007control-chars-123" }, 1, /control characters/],
      [["set-secret", "deploy"], { stdin: "" }, 1, /at least 16 characters \(got 0\)/],
      [["set-secret", "nope"], { stdin: "a-long-enough-secret-123" }, 1, /No webhook named "nope".*opencode-errands webhooks/],
      [["set-secret", "deploy"], { stdin: "a-long-enough-secret-123", env: { AGENT: "1" } }, 1, /inside an OpenCode tool call/],
      [["set-secret"], { stdin: "a-long-enough-secret-123" }, 2, /set-secret needs a webhook name/],
      [["frob"], { stdin: "" }, 2, /Unknown webhooks action 'frob'/],
    ];
    for (const [argv, input, code, message] of cases) {
      const out = await setSecret(argv, input);
      assert.equal(out.code, code, `${argv.join(" ")}: ${out.stderr}`);
      assert.match(out.stderr, message);
      assert.doesNotMatch(out.stderr + out.stdout, /a-long-enough-secret|too-short/);
    }
    assert.equal(secretOf("deploy"), "typed-secret-0123456789");
  });
});
