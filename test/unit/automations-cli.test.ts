import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { main } from "../../src/cli/main.ts";
import { automationFixture, tempDb, PARENT } from "../helpers/automation-fixture.ts";

function run(argv: string[]) {
  let stdout = "";
  let stderr = "";
  const code = main(argv, { stdout: (t: string) => void (stdout += t), stderr: (t: string) => void (stderr += t), env: {} } as never);
  return { code, stdout, stderr };
}

describe("CLI: automations and runs", () => {
  const db = tempDb();
  after(() => db.cleanup());
  let id = "";

  it("lists automations with state, triggers and next run; --json for machines", async () => {
    const f = automationFixture(db.path);
    f.host.setActivity(PARENT, "idle");
    f.service.start();
    id = f.create({ title: "nightly check", notify: "never" }, [{ every: "1m" }]).id;
    const paused = f.create({ title: "on hold" }, [{ cron: "0 9 * * 1-5", timezone: "UTC" }]);
    f.service.update(paused.id, { enabled: false });
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
    assert.match(out.stdout, /^WHEN +RUN +STATUS +DURATION +FIRED BY +NOTIFIED +RESULT$/m);
    assert.match(out.stdout, /20\d\d-\S+Z +#1 +completed +\d+\.\ds +every 1m, planned \S+ +no: notify: never \(history only\) +all good$/m);
    const json = JSON.parse(run(["runs", id, "--db", db.path, "--json"]).stdout);
    assert.equal(json.runs[0].status, "completed");
    const bad = run(["runs", "au_nope", "--db", db.path]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /No automation has an id starting with 'au_nope'\. Run `opencode-background-tasks automations`/);
    assert.equal(run(["runs", "--db", db.path]).code, 2);
  });
});

describe("CLI: webhooks", () => {
  it("lists webhooks with their URL; the secret only with --show-secret", () => {
    const db = tempDb();
    after(() => db.cleanup());
    const loaders = { watch: async () => assert.fail(), command: async () => assert.fail(), github: async () => assert.fail(), webhookListener: async () => async () => ({ listening: false, reason: "test" }) };
    const f = automationFixture(db.path, {}, { loaders: loaders as never });
    const a = f.create({ title: "deploys" }, [{ webhook: "deploy", secret: "whsec_clisecret-clisecret" }]);
    f.close();
    const hidden = run(["webhooks", "--db", db.path]);
    assert.equal(hidden.code, 0, hidden.stderr);
    assert.match(hidden.stdout, new RegExp(`deploy +.*${a.id} deploys +0 +\\(hidden: --show-secret\\)`));
    assert.doesNotMatch(hidden.stdout, /clisecret/);
    assert.match(run(["webhooks", "--db", db.path, "--show-secret"]).stdout, /whsec_clisecret-clisecret/);
    assert.doesNotMatch(run(["export", "--db", db.path]).stdout, /clisecret/, "export leaves webhook secrets out");
  });
});
