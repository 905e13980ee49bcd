import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { freePort } from "../harness/opencode-server.ts";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { startStack, call, toolOutputs, waitUntil, type Stack } from "../harness/plugin-stack.ts";
import { startMockModel, messageText, type MockModel, type MockRequest } from "../harness/mock-model.ts";
import { openSqlite } from "../../src/store/sqlite-driver.ts";
import { signGithub, signStandardWebhook } from "../../src/triggers/webhook-signature.ts";

const BIN = fileURLToPath(new URL("../../bin/opencode-errands.mjs", import.meta.url));

/**
 * Webhook triggers on a real OpenCode: one server takes signed deliveries on the plugin's listener
 * (its own free port), is SIGKILLed right after a 202 and restarted on the same home, project and
 * database; the floods of the rate limits come last, on hooks of their own. The secrets are read
 * with the CLI, as a user does: no tool answer carries them.
 */
describe("webhook triggers on the real host", () => {
  let mock: MockModel;
  let stack: Stack;
  let parent: string;
  let webhookPort: number;
  const logs: string[] = [];
  const dir = mkdtempSync(join(tmpdir(), "ocbt-hook-"));
  const dbPath = join(dir, "tasks.db");
  const deploy = { id: "", url: "", secret: "" };
  const flood = { id: "", url: "", secret: "" };
  const door = { id: "", url: "", secret: "" };
  const cli = (args: string[], input?: string) => spawnSync(process.execPath, [BIN, "webhooks", "--db", dbPath, ...args], { encoding: "utf8", input, env: { ...process.env, AGENT: "", OPENCODE: "" } });
  const secretFromCli = (name: string) => {
    const listed = cli(["--show-secret", "--json"]);
    assert.equal(listed.status, 0, listed.stderr);
    return (JSON.parse(listed.stdout) as Array<{ name: string; secret: string }>).find((h) => h.name === name)?.secret ?? "";
  };

  const start = async (reuse?: Stack) => {
    const next = await startStack({
      mock, pluginOptions: { dbPath, webhookPort, pollIntervalMs: 500 },
      config: { permission: { background_automation: "allow" } },
      reuse: reuse && { homeDir: reuse.server.homeDir, projectDir: reuse.server.projectDir },
    });
    stack = next;
    return next;
  };

  before(async () => {
    webhookPort = await freePort();
    mock = await startMockModel();
    await start();
    parent = await stack.newSession("parent: webhooks");
  });
  after(async () => {
    await stack?.stop().catch(() => undefined);
    await mock?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  // ---- the database ----
  const query = (sql: string, ...params: Array<string | number>) => {
    const conn = openSqlite(dbPath, { readonly: true });
    try {
      return conn.prepare(sql).all(...params) as any[];
    } finally {
      conn.close();
    }
  };
  const runs = (automationId: string) => query("SELECT * FROM automation_runs WHERE automation_id = ? ORDER BY id", automationId);
  const deliveries = (automationId: string) =>
    query("SELECT d.* FROM webhook_deliveries d JOIN automation_triggers t ON t.id = d.trigger_id WHERE t.automation_id = ? ORDER BY d.id", automationId);
  const settled = (automationId: string) => runs(automationId).every((r) => !["starting", "running", "waiting"].includes(r.status));

  // ---- the parent's model ----
  /** The parent's model calls a tool; returns that call's answer. */
  const tool = async (name: string, args: Record<string, unknown>) => {
    const before = (await toolOutputs(stack, parent, name)).length;
    await stack.say(parent, call(name, args));
    const out = (await toolOutputs(stack, parent, name))[before];
    assert.ok(out, `${name} answered`);
    return out;
  };
  const createHook = async (into: typeof deploy, title: string, name: string, prompt: string) => {
    const out = await tool("task_create", { title, prompt, triggers: [{ webhook: name }], notify: "never" });
    const m = /Webhook (\S+): POST (\S+?),? signed with/.exec(out);
    assert.ok(m, `a webhook line in: ${out}`);
    assert.equal(m[1], name);
    into.id = /Created automation (au\w+)/.exec(out)![1]!;
    into.url = m[2]!;
    into.secret = secretFromCli(name);
    assert.ok(into.secret.length >= 16, "the CLI shows the secret");
  };

  // ---- deliveries ----
  const post = (url: string, body: string, headers: Record<string, string>) =>
    fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
  const github = (secret: string, body: string, deliveryId: string, event = "deployment") =>
    ({ "x-github-delivery": deliveryId, "x-github-event": event, "x-hub-signature-256": signGithub(secret, body) });
  const standard = (secret: string, body: string, id: string, at = Math.floor(Date.now() / 1000)) =>
    ({ "webhook-id": id, "webhook-timestamp": String(at), "webhook-signature": signStandardWebhook(secret, id, at, body) });

  /** The child's model requests for one run, in order (the first user message names the run). */
  const childRequests = (automationId: string, runNo: number): MockRequest[] =>
    mock.requests().filter((r) => {
      const first = r.body.messages.find((m) => m.role === "user");
      return first !== undefined && messageText(first).includes(`(${automationId}), run #${runNo},`);
    });
  const firstUserText = (r: MockRequest) => messageText(r.body.messages.find((m) => m.role === "user")!);

  it("creates webhook triggers through task_create; the listener serves them on its port", async () => {
    await createHook(deploy, "deploy hook", "deploy", "REPLY deployed");
    await createHook(flood, "flood hook", "flood", "REPLY flooded");
    await createHook(door, "door hook", "door", "REPLY door opened");
    assert.equal(deploy.url, `http://127.0.0.1:${webhookPort}/hooks/deploy`);
    assert.equal(flood.url, `http://127.0.0.1:${webhookPort}/hooks/flood`);
    assert.match(deploy.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.notEqual(deploy.secret, flood.secret);
    // The listener comes up after the create (asynchronously).
    await waitUntil(
      () => fetch(`http://127.0.0.1:${webhookPort}/hooks/nobody`, { method: "POST", body: "{}" }).then((r) => r.arrayBuffer()).catch(() => undefined),
      { timeoutMs: 10_000, what: "the webhook listener" },
    );
  });

  it("the tool answers never carry the secret: they say where the user reads it", async () => {
    const answers = (await toolOutputs(stack, parent, "task_create")).join("\n");
    assert.equal(answers.match(/opencode-errands webhooks --show-secret/g)?.length, 3, answers);
    for (const secret of [deploy.secret, flood.secret, door.secret]) assert.ok(!answers.includes(secret), `a tool answer shows a secret: ${answers}`);
  });

  it("an unknown hook name answers 401 exactly as a wrong signature does", async () => {
    const body = JSON.stringify({ action: "probe" });
    const headers = github("whsec_a-guess-at-the-secret-0000", body, "probe-1");
    const unknown = await post(`http://127.0.0.1:${webhookPort}/hooks/nobody`, body, headers);
    const known = await post(deploy.url, body, headers);
    const shape = (r: Response) => [...r.headers].filter(([h]) => h !== "date");
    assert.deepEqual([unknown.status, await unknown.text(), shape(unknown)], [known.status, await known.text(), shape(known)]);
    assert.equal(unknown.status, 401);
  });

  it("a good GitHub signature and a good Standard Webhooks signature each start one run with the event in the child's prompt", async () => {
    const ghBody = JSON.stringify({ action: "created", ref: "main", marker: "gh-marker-7a1" });
    const gh = await post(deploy.url, ghBody, github(deploy.secret, ghBody, "gh-delivery-1"));
    assert.equal(gh.status, 202);
    const ghAnswer = (await gh.json()) as { accepted: boolean; run: unknown };
    assert.equal(ghAnswer.accepted, true);
    await waitUntil(() => settled(deploy.id) && runs(deploy.id).length === 1, { timeoutMs: 20_000, what: "the GitHub-signed run" });
    const [first] = runs(deploy.id);
    assert.equal(ghAnswer.run, first.id, "the 202 names the run");
    assert.deepEqual([first.status, first.fired_by, first.run_no, first.event_summary], ["completed", "webhook", 1, "POST /hooks/deploy (deployment created)"]);
    const ghChild = childRequests(deploy.id, 1);
    assert.ok(ghChild.length >= 1, "the run's child asked the model");
    assert.ok(firstUserText(ghChild[0]!).includes(`[Event: POST /hooks/deploy (deployment created)]\n${ghBody}`), firstUserText(ghChild[0]!));

    const swBody = JSON.stringify({ action: "released", version: "1.2.3", marker: "sw-marker-4c9" });
    const sw = await post(deploy.url, swBody, standard(deploy.secret, swBody, "msg_sw_1"));
    assert.equal(sw.status, 202);
    const swAnswer = (await sw.json()) as { run: unknown };
    await waitUntil(() => settled(deploy.id) && runs(deploy.id).length === 2, { timeoutMs: 20_000, what: "the Standard-Webhooks-signed run" });
    const second = runs(deploy.id)[1];
    assert.equal(swAnswer.run, second.id);
    assert.deepEqual([second.status, second.fired_by, second.run_no, second.event_summary], ["completed", "webhook", 2, "POST /hooks/deploy (released)"]);
    const swChild = childRequests(deploy.id, 2);
    assert.ok(firstUserText(swChild[0]!).includes(`[Event: POST /hooks/deploy (released)]\n${swBody}`), firstUserText(swChild[0]!));
    assert.equal(deliveries(deploy.id).length, 2);
  });

  it("refuses bad deliveries without a run: wrong or missing signature 401, 2 MB 413, unknown name 401, GET 405", async () => {
    const body = JSON.stringify({ action: "forged" });
    const statusOf = async (res: Promise<Response>) => {
      const r = await res;
      await r.arrayBuffer();
      return r;
    };
    const wrong = await statusOf(post(deploy.url, body, github("not-the-secret", body, "forged-1")));
    const tampered = await statusOf(post(deploy.url, body, { ...github(deploy.secret, "{}", "forged-2") }));
    const wrongStandard = await statusOf(post(deploy.url, body, standard(flood.secret, body, "forged-3")));
    const stale = await statusOf(post(deploy.url, body, standard(deploy.secret, body, "forged-4", Math.floor(Date.now() / 1000) - 600)));
    const missing = await statusOf(post(deploy.url, body, { "x-github-delivery": "forged-5", "x-github-event": "push" }));
    assert.deepEqual([wrong, tampered, wrongStandard, stale, missing].map((r) => r.status), [401, 401, 401, 401, 401]);

    const big = "x".repeat(2 * 1024 * 1024);
    const tooLarge = await statusOf(post(deploy.url, big, github(deploy.secret, big, "big-1")));
    assert.equal(tooLarge.status, 413);
    const unknown = await statusOf(post(`http://127.0.0.1:${webhookPort}/hooks/nope`, body, github(deploy.secret, body, "nope-1")));
    assert.equal(unknown.status, 401);
    const get = await statusOf(fetch(deploy.url));
    assert.equal(get.status, 405);
    assert.equal(get.headers.get("allow"), "POST");

    // Nothing was stored and nothing ran (give a wrongly accepted one time to show up).
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(deliveries(deploy.id).length, 2);
    assert.equal(runs(deploy.id).length, 2);
  });

  it("the same delivery id twice runs once; the second answer is 200", async () => {
    const body = JSON.stringify({ action: "synchronize", marker: "dup-marker-19e" });
    const firstTry = await post(deploy.url, body, github(deploy.secret, body, "gh-dup-1", "pull_request"));
    assert.equal(firstTry.status, 202);
    await firstTry.arrayBuffer();
    const again = await post(deploy.url, body, github(deploy.secret, body, "gh-dup-1", "pull_request"));
    assert.equal(again.status, 200);
    assert.deepEqual(await again.json(), { duplicate: true });
    // A Standard Webhooks replay of the earlier message id too.
    const swBody = JSON.stringify({ action: "released", version: "1.2.3", marker: "sw-marker-4c9" });
    const replay = await post(deploy.url, swBody, standard(deploy.secret, swBody, "msg_sw_1"));
    assert.equal(replay.status, 200);
    await replay.arrayBuffer();
    await waitUntil(() => settled(deploy.id) && runs(deploy.id).length >= 3, { timeoutMs: 20_000, what: "the deduplicated run" });
    await new Promise((r) => setTimeout(r, 500));
    const withMarker = runs(deploy.id).filter((r) => String(r.event_data).includes("dup-marker-19e"));
    assert.deepEqual(withMarker.map((r) => [r.status, r.run_no]), [["completed", 3]]);
    assert.equal(runs(deploy.id).length, 3);
    assert.equal(deliveries(deploy.id).length, 3);
  });

  it("the same signed body with three different delivery ids, or none, runs once", async () => {
    const body = JSON.stringify({ action: "opened", marker: "triple-marker-8b0" });
    const statuses: number[] = [];
    for (const id of ["triple-1", "triple-2", "triple-3", ""]) {
      const headers: Record<string, string> = github(deploy.secret, body, id, "issues");
      if (!id) delete headers["x-github-delivery"];
      const res = await post(deploy.url, body, headers);
      statuses.push(res.status);
      await res.arrayBuffer();
    }
    assert.deepEqual(statuses, [202, 200, 200, 200]);
    await waitUntil(() => settled(deploy.id) && runs(deploy.id).some((r) => String(r.event_data).includes("triple-marker-8b0")), { timeoutMs: 20_000, what: "the run" });
    await new Promise((r) => setTimeout(r, 500)); // a second run would show by now
    assert.equal(runs(deploy.id).filter((r) => String(r.event_data).includes("triple-marker-8b0")).length, 1);
    assert.equal(deliveries(deploy.id).filter((d) => String(d.data).includes("triple-marker-8b0")).length, 1);
  });

  it("a delivery accepted just before a SIGKILL runs once after the restart", async () => {
    const body = JSON.stringify({ action: "crashed", marker: "kill-marker-3d2" });
    const res = await post(deploy.url, body, github(deploy.secret, body, "gh-kill-1"));
    await stack.server.kill();
    const killedAt = Date.now();
    assert.equal(res.status, 202);
    const killed = stack;
    killed.events.close();
    logs.push(killed.server.logs());
    const atKill = deliveries(deploy.id).find((d) => d.delivery_id === "gh-kill-1");
    assert.ok(atKill, "stored before the answer");
    await start(killed);
    await waitUntil(() => runs(deploy.id).some((r) => String(r.event_data).includes("kill-marker-3d2") && r.status === "completed"), { timeoutMs: 30_000, what: "the delivery's run after the restart" });
    await waitUntil(() => settled(deploy.id), { timeoutMs: 20_000, what: "runs settled" });
    await new Promise((r) => setTimeout(r, 2500)); // a tick of the event sources: a second firing would show by now
    const forIt = runs(deploy.id).filter((r) => String(r.event_data).includes("kill-marker-3d2"));
    const ran = forIt.filter((r) => r.status !== "skipped");
    assert.equal(ran.length, 1, `one run: ${JSON.stringify(forIt.map((r) => [r.status, r.skip_reason]))}`);
    assert.equal(ran[0].status, "completed");
    assert.ok(ran[0].started_at > killedAt, `it ran after the restart (delivery ${atKill.status} at the kill)`);
    // A run the kill cut off before it launched stays in the history as an interrupted skip, without a child.
    assert.ok(forIt.every((r) => r === ran[0] || (r.status === "skipped" && r.skip_reason === "interrupted" && r.task_id === null)));
    // Only the run of that event asked the model after the restart: one child, one run number.
    const runNos = new Set(mock.requests().filter((r) => firstUserText(r).includes("kill-marker-3d2")).map((r) => /run #(\d+)/.exec(firstUserText(r))?.[1]));
    assert.deepEqual([...runNos], [String(ran[0].run_no)]);
    assert.equal(deliveries(deploy.id).find((d) => d.delivery_id === "gh-kill-1").status, "fired");
  });

  it("the secret stays out of the server's logs, the plugin's other tables and task_read; the CLI shows it only when asked", async () => {
    const read = await tool("task_read", { id: deploy.id });
    assert.match(read, /deploy hook/);
    assert.ok(read.includes(`POST ${deploy.url}`), read);
    assert.ok(!read.includes(deploy.secret), "task_read hides the secret");

    const serverLogs = [...logs, stack.server.logs(), await stack.server.logFile()].join("\n");
    assert.match(serverLogs, /Webhooks listening on http:\/\/127\.0\.0\.1/, "the plugin's log lines are in there");
    for (const secret of [deploy.secret, flood.secret, door.secret]) assert.ok(!serverLogs.includes(secret), "no secret in the server's logs");
    // Nothing the model was sent (tool answers included) holds a secret.
    const toModel = JSON.stringify(mock.requests().map((r) => r.body));
    assert.match(toModel, /opencode-errands webhooks --show-secret/, "the model saw the tool answers");
    for (const secret of [deploy.secret, flood.secret, door.secret]) assert.ok(!toModel.includes(secret), "no secret in a model request");

    const tables = query("SELECT name FROM sqlite_master WHERE type = 'table'").map((t) => String(t.name));
    for (const name of ["automation_runs", "task_events", "automation_triggers", "webhook_deliveries", "webhooks"]) assert.ok(tables.includes(name), name);
    const holding = (secret: string) => tables.filter((table) => {
      const columns = query(`SELECT name FROM pragma_table_info('${table}')`).map((c) => `coalesce(CAST("${c.name}" AS TEXT), '')`);
      return query(`SELECT count(*) AS n FROM "${table}" WHERE instr(${columns.join(" || char(10) || ")}, ?) > 0`, secret)[0].n > 0;
    });
    assert.deepEqual(holding(deploy.secret), ["webhooks"]);
    assert.deepEqual(holding(flood.secret), ["webhooks"]);

    const hidden = cli([]);
    assert.equal(hidden.status, 0, hidden.stderr);
    assert.match(hidden.stdout, /^deploy\s+http:\/\/127\.0\.0\.1:\d+\/hooks\/deploy\s+au\w+ deploy hook\s+0\s+\(hidden: --show-secret\)$/m);
    assert.ok(!hidden.stdout.includes(deploy.secret) && !hidden.stdout.includes(flood.secret));
    const shown = cli(["--show-secret"]);
    assert.equal(shown.status, 0, shown.stderr);
    assert.ok(shown.stdout.includes(deploy.secret) && shown.stdout.includes(flood.secret), shown.stdout);
    // Inside an OpenCode tool call (its bash tool sets AGENT=1 and OPENCODE=1) the secrets would reach the model (issue 33).
    for (const env of [{ AGENT: "1", OPENCODE: "" }, { AGENT: "", OPENCODE: "1" }]) {
      const inside = spawnSync(process.execPath, [BIN, "webhooks", "--db", dbPath, "--show-secret", "--json"], { encoding: "utf8", env: { ...process.env, ...env } });
      assert.equal(inside.status, 1, inside.stdout);
      assert.match(inside.stderr, /Not shown: this runs inside an OpenCode tool call/);
      assert.ok(!(inside.stdout + inside.stderr).includes(deploy.secret), "no secret printed");
    }
  });

  it("a secret in a tool call's trigger is refused, naming the CLI command, and nothing is stored", async () => {
    const chosen = "whsec_the-model-chose-this-0123456789";
    const before = { automations: query("SELECT id FROM automations").length, triggers: query("SELECT id FROM automation_triggers").length, hooks: query("SELECT name FROM webhooks").length };
    const created = await tool("task_create", { title: "chosen secret", prompt: "REPLY x", triggers: [{ webhook: "chosen", secret: chosen }] });
    const added = await tool("task_trigger_add", { id: deploy.id, trigger: { webhook: "chosen-2", secret: chosen } });
    const proposed = await tool("task_propose", { title: "chosen secret", reason: "to test", prompt: "REPLY x", triggers: [{ webhook: "chosen-3", secret: chosen }] });
    for (const out of [created, added, proposed]) {
      assert.match(out, /"secret" cannot be given here/, out);
      assert.match(out, /opencode-errands webhooks set-secret chosen/, out);
      assert.ok(!out.includes(chosen), out);
    }
    const after = { automations: query("SELECT id FROM automations").length, triggers: query("SELECT id FROM automation_triggers").length, hooks: query("SELECT name FROM webhooks").length };
    assert.deepEqual(after, before, "nothing stored");
    assert.equal(query("SELECT count(*) AS n FROM webhooks WHERE secret = ?", chosen)[0].n, 0);
  });

  it("webhooks set-secret sets the user's own secret from stdin: deliveries signed with it run, the old one gets 401", async () => {
    const mine = "my-own-secret-from-a-password-manager";
    const set = cli(["set-secret", "deploy"], `${mine}\n`);
    assert.equal(set.status, 0, set.stderr);
    assert.match(set.stdout, /Webhook deploy: the new secret is set \(37 characters\)/);
    assert.ok(!set.stdout.includes(mine) && !set.stderr.includes(mine));
    const before = runs(deploy.id).length;
    const body = JSON.stringify({ action: "rotated", marker: "rotated-marker-2e4" });
    const old = await post(deploy.url, body, github(deploy.secret, body, "rotated-old"));
    assert.equal(old.status, 401);
    await old.arrayBuffer();
    const fresh = await post(deploy.url, body, standard(mine, body, "rotated-new"));
    assert.equal(fresh.status, 202);
    await fresh.arrayBuffer();
    await waitUntil(() => settled(deploy.id) && runs(deploy.id).length === before + 1, { timeoutMs: 20_000, what: "the run signed with the new secret" });
    deploy.secret = mine;
    const serverLogs = [stack.server.logs(), await stack.server.logFile()].join("\n");
    assert.ok(!serverLogs.includes(mine), "the new secret is in no log line");
  });

  it("a paused automation's route answers 401, as an unknown name, and runs nothing", async () => {
    const out = await tool("task_update", { id: deploy.id, enabled: false });
    assert.match(out, /Updated automation/);
    const before = { runs: runs(deploy.id).length, deliveries: deliveries(deploy.id).length };
    const body = JSON.stringify({ action: "while-paused" });
    const res = await post(deploy.url, body, github(deploy.secret, body, "gh-paused-1"));
    assert.equal(res.status, 401);
    await res.arrayBuffer();
    // Still 401 after the event sources' next tick (the listener stays up for the flood hook).
    await new Promise((r) => setTimeout(r, 2500));
    const later = await post(deploy.url, body, github(deploy.secret, body, "gh-paused-2"));
    assert.equal(later.status, 401);
    await later.arrayBuffer();
    assert.deepEqual({ runs: runs(deploy.id).length, deliveries: deliveries(deploy.id).length }, before);
  });

  it("100 signed deliveries in about a second: 60 accepted, then 429 with Retry-After; OpenCode stays healthy", async () => {
    const statuses: number[] = [];
    const retryAfter: string[] = [];
    for (let batch = 0; batch < 10; batch++) {
      const sent = Array.from({ length: 10 }, (_, i) => {
        const body = JSON.stringify({ action: "flood", n: batch * 10 + i });
        return post(flood.url, body, github(flood.secret, body, `flood-${batch}-${i}`, "push"));
      });
      for (const res of await Promise.all(sent)) {
        statuses.push(res.status);
        if (res.status === 429) retryAfter.push(res.headers.get("retry-after") ?? "");
        await res.arrayBuffer();
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.deepEqual(statuses.slice(0, 60), Array(60).fill(202), "the first 60 are accepted");
    assert.deepEqual(statuses.slice(60), Array(40).fill(429), "the rest are refused");
    assert.ok(retryAfter.every((v) => /^\d+$/.test(v) && Number(v) >= 1 && Number(v) <= 60), `Retry-After: ${retryAfter.join(",")}`);

    // OpenCode answers while the runs of the flood go on.
    const sessions = await fetch(`${stack.server.url}/session?directory=${encodeURIComponent(stack.server.projectDir)}`);
    assert.equal(sessions.status, 200);
    assert.ok(Array.isArray(await sessions.json()));
    const health = await stack.newSession("health check");
    await stack.say(health, "REPLY still answering");
    const answer = (await stack.messages(health)).filter((m) => m.info.role === "assistant").flatMap((m) => m.parts).filter((p) => p.type === "text").map((p) => p.text).join("");
    assert.equal(answer, "still answering");

    // Each accepted delivery fired once: runs plus the firings each skipped row counts make 60.
    await waitUntil(() => settled(flood.id) && deliveries(flood.id).every((d) => d.status === "fired"), { timeoutMs: 30_000, what: "the flood's runs settled" });
    assert.equal(deliveries(flood.id).length, 60);
    const rows = runs(flood.id);
    const firings = (r: any) => (r.status === "skipped" ? (r.skip_count ?? 1) : 1 + (r.event_folded ?? 0));
    assert.equal(rows.reduce((n, r) => n + firings(r), 0), 60, JSON.stringify(rows.map((r) => [r.status, r.skip_reason, r.skip_count, r.event_folded])));
    assert.ok(rows.every((r) => r.status === "completed" || (r.status === "skipped" && r.skip_reason === "overlap")), JSON.stringify(rows.map((r) => [r.status, r.skip_reason])));
  });

  it("60 unsigned POSTs, then a signed delivery: 202 and one run", async () => {
    const unsigned: number[] = [];
    for (let i = 0; i < 60; i++) {
      const res = await post(door.url, JSON.stringify({ action: "knock", n: i }), { "x-github-delivery": `knock-${i}`, "x-github-event": "push" });
      unsigned.push(res.status);
      await res.arrayBuffer();
    }
    assert.equal(unsigned[0], 401);
    assert.ok(unsigned.every((status) => status === 401 || status === 429), unsigned.join(","));
    const body = JSON.stringify({ action: "welcome", marker: "door-marker-6f3" });
    const signed = await post(door.url, body, github(door.secret, body, "door-1", "push"));
    assert.equal(signed.status, 202);
    await signed.arrayBuffer();
    await waitUntil(() => settled(door.id) && runs(door.id).length === 1, { timeoutMs: 20_000, what: "the signed delivery's run" });
    await new Promise((r) => setTimeout(r, 500));
    assert.deepEqual(runs(door.id).map((r) => [r.status, String(r.event_data).includes("door-marker-6f3")]), [["completed", true]]);
    assert.equal(deliveries(door.id).length, 1, "no unsigned request was stored");
  });

  it("70 replays of a signed delivery are answered 200 duplicate without spending the hook's 60 a minute: its sender's next delivery is accepted (issue 33)", async () => {
    const body = JSON.stringify({ action: "welcome", marker: "door-marker-6f3" });
    const captured = github(door.secret, body, "door-1", "push"); // the delivery of the test above, as a captured request
    const replays: number[] = [];
    for (let i = 0; i < 70; i++) {
      const res = await post(door.url, body, captured);
      replays.push(res.status);
      await res.arrayBuffer();
    }
    assert.deepEqual([...new Set(replays)], [200]);
    const nextBody = JSON.stringify({ action: "welcome", marker: "door-marker-next" });
    const next = await post(door.url, nextBody, github(door.secret, nextBody, "door-2", "push"));
    assert.equal(next.status, 202, "the replays spent none of the hook's limit");
    await next.arrayBuffer();
    // A delivery is stored before it is answered: the 202 one is there, no replay is.
    assert.deepEqual(deliveries(door.id).map((d) => d.delivery_id), ["door-1", "door-2"]);
  });
});
