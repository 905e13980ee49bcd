import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { randomBytes } from "node:crypto";
import { startStack, call, toolOutputs, waitUntil, type Stack, queryDb } from "../harness/plugin-stack.ts";
import { startMockModel, type MockModel } from "../harness/mock-model.ts";
import { startReceiver, type Answer, type Received, type Receiver } from "../helpers/channel-receiver.ts";
import { verifyWebhookSignature } from "../../src/triggers/webhook-signature.ts";
import type { SqlValue } from "../../src/store/sqlite-driver.ts";

/**
 * Channels on a real OpenCode: a receiver served here stands in for Slack, ntfy, Discord and a
 * signed json webhook. Two servers share one database from early on (the second one's channels
 * point at /b/… paths, so the receiver can tell which process sent what); the scenarios run side
 * by side in their own parent sessions, the slow retry one (~35 s of backoff) last to finish.
 */
const FORMATS = { team: "slack", phone: "ntfy", ops: "discord", bot: "json", flaky: "slack", limited: "discord", twin: "json" } as const;
type Name = keyof typeof FORMATS;
const NAMES = Object.keys(FORMATS) as Name[];
const token = () => `tok${randomBytes(8).toString("hex")}`;
/** Each channel's URL path carries a token, as real webhook URLs do: it must never show anywhere. */
const TOKENS = Object.fromEntries(NAMES.map((n) => [n, token()])) as Record<Name, string>;
const SECRET = `whsec_${randomBytes(32).toString("base64")}`;
const EVIL = token();
const ALLOW = { permission: { background_automation: "allow" } };
const RETRY_AFTER_S = 8; // longer than the first backoff (5 s): an attempt that ignored it would come early
const LONG = `All 120 checks passed: ${"lorem ipsum dolor sit amet ".repeat(200)}END`;
const FOUR: Name[] = ["team", "phone", "ops", "bot"];

type Hit = { channel: Name; via: string; answer: number; key: string; title: string; runNo: number; r: Received };

describe("channels on the real host", () => {
  let mock: MockModel;
  let receiver: Receiver;
  let a: Stack;
  let b: Stack;
  const stacks: Stack[] = [];
  const dir = mkdtempSync(join(tmpdir(), "ocbt-chan-"));
  const dbPath = join(dir, "tasks.db");
  const hits: Hit[] = [];
  const stray: Received[] = [];
  const ids: Record<string, string> = {};
  const parents: Record<string, string> = {};
  const started = Date.now();
  /** The flaky delivery's row between attempts, as a reader of the database sees it. */
  const flakyStates: string[] = [];
  let watcher: ReturnType<typeof setInterval> | undefined;
  after(async () => {
    clearInterval(watcher);
    for (const stack of stacks.reverse()) await stack.stop().catch(() => undefined);
    await mock?.close();
    await receiver?.close();
    rmSync(dir, { recursive: true, force: true });
    console.log(`channels.test.ts wall time ${((Date.now() - started) / 1000).toFixed(1)} s`);
  });

  /** flaky: 503, connection closed, 503, then 200; limited: 429 with Retry-After once, then 200. */
  const answerFor = (name: Name, attempt: number): Answer => {
    if (name === "flaky" && attempt <= 3) return attempt === 2 ? { status: 0, drop: true } : { status: 503 };
    if (name === "limited" && attempt === 1) return { status: 429, headers: { "Retry-After": String(RETRY_AFTER_S) } };
    return { status: 200 };
  };
  const startReceiving = async () => {
    const attempts = new Map<Name, number>();
    receiver = await startReceiver((r) => {
      const m = /^\/([ab])\/\w+\/(tok[0-9a-f]+)$/.exec(r.path);
      const name = NAMES.find((n) => TOKENS[n] === m?.[2]);
      if (!m || !name) return (stray.push(r), { status: 404 });
      const attempt = (attempts.get(name) ?? 0) + 1;
      attempts.set(name, attempt);
      const answer = answerFor(name, attempt);
      hits.push({ channel: name, via: m[1]!, answer: answer.drop ? 0 : answer.status, key: String(r.headers["idempotency-key"] ?? ""), ...identity(name, r), r });
      return answer;
    });
  };
  const channelsFor = (via: "a" | "b") => Object.fromEntries(NAMES.map((n) => [n, {
    url: receiver.url(`/${via}/${FORMATS[n]}/${TOKENS[n]}`), format: FORMATS[n], ...(n === "bot" ? { secret: SECRET } : {}),
  }]));
  const start = async (via: "a" | "b", reuse?: Stack) => {
    const stack = await startStack({
      mock, config: ALLOW, pluginOptions: { dbPath, pollIntervalMs: 500, channels: channelsFor(via) },
      reuse: reuse && { homeDir: reuse.server.homeDir, projectDir: reuse.server.projectDir },
    });
    stacks.push(stack);
    return stack;
  };

  /** The parent's model calls task_create (the config allows automations without a prompt). */
  const create = async (stack: Stack, parent: string, args: Record<string, unknown>) => {
    await stack.say(parent, call("task_create", args));
    const [out = ""] = await toolOutputs(stack, parent, "task_create");
    return { out, id: /Created automation (au\w+)/.exec(out)?.[1] };
  };
  const query = <T = any>(sql: string, ...params: SqlValue[]): T[] => queryDb<T>(dbPath, sql, ...params);
  const ofTitle = (title: string, channel?: Name) => hits.filter((h) => h.title === title && (!channel || h.channel === channel));
  const automationNotes = async (stack: Stack, parent: string) =>
    (await stack.messages(parent)).filter((m) => m.info.role === "user")
      .map((m) => m.parts.filter((p) => p.type === "text").map((p) => p.text).join("\n"))
      .filter((text) => text.includes("<automation-"));

  it("two servers on one database take definitions that name channels; a URL in channels is refused", async () => {
    mock = await startMockModel();
    await startReceiving();
    a = await start("a");
    const scenarios: [string, Record<string, unknown>][] = [
      ["green", { title: "Green report", prompt: `REPLY ${LONG}`, channels: FOUR }],
      ["red", { title: "Red report", prompt: "FAIL 400 boom", channels: FOUR }],
      ["flaky", { title: "Flaky hook", prompt: "REPLY flaky result", channels: ["flaky"] }],
      ["limited", { title: "Slow down", prompt: "REPLY limited result", channels: ["limited"] }],
      ["quiet", { title: "Quiet one", prompt: "REPLY quiet result", channels: ["team", "bot"], notify: "never", max_runs: 2 }],
      ["only", { title: "Channels only", prompt: "REPLY only result", channels: ["ops"], report: "channels" }],
      ["sneaky", { title: "Sneaky", prompt: "REPLY sneaky", channels: [`http://127.0.0.1:${receiver.port}/a/json/${EVIL}`] }],
    ];
    watcher = setInterval(() => {
      const [row] = query("SELECT status, last_error FROM channel_deliveries WHERE channel = 'flaky'");
      const state = row && `${row.status} ${row.last_error}`;
      if (state && state !== flakyStates.at(-1)) flakyStates.push(state);
    }, 100);
    const sessions = await Promise.all(scenarios.map(([key]) => a.newSession(`parent: ${key}`)));
    // The second server starts while the first one's runs begin: it joins the flaky delivery's retries.
    const second = start("b", a);
    const made = await Promise.all(scenarios.map(([key, args], i) => {
      parents[key] = sessions[i]!;
      return create(a, sessions[i]!, { triggers: [{ every: "2s" }], max_runs: 1, notify: "always", ...args });
    }));
    scenarios.forEach(([key], i) => made[i]!.id && (ids[key] = made[i]!.id!));
    assert.deepEqual(Object.keys(ids), ["green", "red", "flaky", "limited", "quiet", "only"], made.map((m) => m.out).join("\n"));
    assert.match(made[6]!.out, /never a URL\. Configured: team, phone, ops, bot, flaky, limited, twin\./);
    assert.equal(query("SELECT id FROM automations WHERE title = 'Sneaky'").length, 0, "the refused definition stored nothing");

    b = await second;
    parents.twin = await b.newSession("parent: twin");
    const twin = await create(b, parents.twin, { title: "Twin runs", prompt: "REPLY twin result", channels: ["twin"], triggers: [{ every: "2s" }], max_runs: 3, notify: "always" });
    assert.ok(twin.id, twin.out);
    ids.twin = twin.id;
  });

  it("each notification arrives in its channel's format: slack, ntfy, discord, signed json", async () => {
    await waitUntil(() => FOUR.every((n) => ofTitle("Green report", n).length && ofTitle("Red report", n).length), { timeoutMs: 40_000, what: "green and red in all four channels" });
    const one = (title: string, channel: Name) => {
      const found = ofTitle(title, channel);
      assert.equal(found.length, 1, `${title} in ${channel}`);
      assert.equal(found[0]!.answer, 200);
      assert.match(found[0]!.key, /^[0-9a-f-]{36}$/, "an Idempotency-Key");
      assert.equal(found[0]!.r.method, "POST");
      return found[0]!.r;
    };

    const slack = JSON.parse(one("Green report", "team").body);
    const summary = `${LONG.slice(0, 499)}…`;
    assert.equal(slack.text, `✅ Green report run #1 completed: ${summary}`);
    assert.equal(slack.blocks.length, 1);
    assert.equal(slack.blocks[0].type, "section");
    assert.equal(slack.blocks[0].text.type, "mrkdwn");
    assert.match(slack.blocks[0].text.text, /^\*Green report\* run #1 completed\n_every 2s, planned [^_]+_\nAll 120 checks passed: lorem/);
    assert.ok(slack.blocks[0].text.text.length <= 3000, "within Slack's section limit");
    assert.match(JSON.parse(one("Red report", "team").body).text, /^❌ Red report run #1 failed: .*boom/);

    const ntfyGreen = one("Green report", "phone");
    assert.equal(ntfyGreen.headers.title, "Green report run #1 completed");
    assert.equal(ntfyGreen.headers.priority, "default");
    assert.equal(ntfyGreen.headers.tags, "white_check_mark,robot");
    assert.match(ntfyGreen.headers["content-type"] ?? "", /^text\/plain/);
    // ntfy's body stays under 3,900 bytes (beyond, ntfy makes it an attachment): the long result is cut.
    assert.equal(ntfyGreen.body, `${LONG.slice(0, 3900 - Buffer.byteLength("\n[…]"))}\n[…]`, "cut at 3,900 bytes");
    const ntfyRed = one("Red report", "phone");
    assert.equal(ntfyRed.headers.priority, "high", "a failing run is high priority");
    assert.equal(ntfyRed.headers.tags, "x,robot");
    assert.match(ntfyRed.body, /^Error: .*boom.*\n\nevery 2s, planned \d{4}-/);

    const discord = JSON.parse(one("Green report", "ops").body);
    assert.ok(discord.content.length <= 2000, `Discord content is ${discord.content.length} characters`);
    assert.ok(discord.content.length > 1900, "the long result fills it");
    assert.match(discord.content, /^✅ \*\*Green report\*\* run #1 completed \(every 2s, planned .*\)\nAll 120 checks passed: lorem[\s\S]*more characters\]$/);
    assert.deepEqual(discord.allowed_mentions, { parse: [] });
    assert.match(JSON.parse(one("Red report", "ops").body).content, /^❌ \*\*Red report\*\* run #1 failed/);

    for (const [title, status] of [["Green report", "completed"], ["Red report", "error"]] as const) {
      const r = one(title, "bot");
      const check = verifyWebhookSignature(SECRET, r.headers, r.body, Date.now());
      assert.deepEqual(check, { ok: true, deliveryId: r.headers["idempotency-key"] }, "signed with the secret; webhook-id is the Idempotency-Key");
      const body = JSON.parse(r.body);
      assert.deepEqual(Object.keys(body).sort(), ["automation", "branch", "result", "run", "status", "summary", "taskId", "trigger", "type"]);
      assert.equal(body.type, "automation.run");
      assert.equal(body.branch, null, "a plain run has no branch (json channel field since 029e664)");
      const key = title === "Green report" ? "green" : "red";
      assert.deepEqual(body.automation, { id: ids[key], title });
      const [run] = query("SELECT * FROM automation_runs WHERE automation_id = ? AND run_no = 1", ids[key]);
      assert.deepEqual(body.run, { no: 1, id: run.id });
      assert.equal(body.status, status);
      assert.equal(body.taskId, run.task_id);
      assert.match(body.trigger, /^every 2s, planned \d{4}-/);
      if (status === "completed") {
        assert.equal(body.result.length, 4000, "the result is capped at 4,000 characters");
        assert.ok(body.result.startsWith(LONG.slice(0, 3900)) && body.result.endsWith("more characters]"), "the cut result");
        assert.equal(body.summary, `${LONG.slice(0, 499)}…`);
      } else assert.match(body.result, /^Error: .*boom/);
    }
    // Every request carries a distinct Idempotency-Key per (run, channel).
    const keys = FOUR.flatMap((n) => [ofTitle("Green report", n)[0]!.key, ofTitle("Red report", n)[0]!.key]);
    assert.equal(new Set(keys).size, 8);
  });

  it("a 429 with Retry-After is waited out before the next attempt", async () => {
    await waitUntil(() => ofTitle("Slow down").length >= 2, { timeoutMs: 40_000, what: "the attempt after the 429" });
    const [first, second] = ofTitle("Slow down");
    assert.deepEqual([first!.answer, second!.answer], [429, 200]);
    const gap = second!.r.at - first!.r.at;
    assert.ok(gap >= RETRY_AFTER_S * 1000 - 50, `the second attempt came ${gap} ms after the 429 (Retry-After ${RETRY_AFTER_S} s)`);
    assert.equal(second!.key, first!.key, "the same Idempotency-Key on the retry");
  });

  it("the receiver down for three attempts (503, connection closed, 503), then up: delivered once after the backoff", async () => {
    await waitUntil(() => ofTitle("Flaky hook").some((h) => h.answer === 200), { timeoutMs: 75_000, intervalMs: 200, what: "the flaky delivery" });
    await waitUntil(() => flakyStates.at(-1) === "delivered null", { what: "the flaky delivery confirmed in the database" });
    const tries = ofTitle("Flaky hook");
    assert.deepEqual(tries.map((h) => h.answer), [503, 0, 503, 200]);
    assert.equal(new Set(tries.map((h) => h.key)).size, 1, "one Idempotency-Key over all attempts");
    const gaps = tries.slice(1).map((h, i) => h.r.at - tries[i]!.r.at);
    [5000, 10_000, 20_000].forEach((backoff, i) => assert.ok(gaps[i]! >= backoff - 50, `backoff ${i + 1}: ${gaps[i]} ms, expected >= ${backoff}`));
    // Each failure is recorded without the URL: a status code, or the network error's code alone.
    const states = flakyStates.filter((st, i) => i > 0 || st !== "pending null").map((st) => st.replace(/\(\w+\)/, "(CODE)"));
    assert.deepEqual(states, ["pending HTTP 503", "pending network error (CODE)", "pending HTTP 503", "delivered null"], flakyStates.join(" | "));
    console.log(`flaky row states: ${flakyStates.join(" | ")}`);
    console.log(`flaky attempts sent by ${tries.map((h) => h.via).join(", ")}; gaps ${gaps.join(", ")} ms`);
  });

  it("two servers on one database send each notice exactly once; notify never and report channels behave", async () => {
    await waitUntil(() => ofTitle("Twin runs").length >= 3, { timeoutMs: 30_000, what: "three twin runs delivered" });
    await waitUntil(() => query("SELECT status FROM automation_runs WHERE automation_id = ? AND status = 'completed'", ids.quiet).length === 2, { what: "two quiet runs" });
    // Nothing may still be on its way: every queued delivery has ended, and a little longer for strays.
    await waitUntil(() => query("SELECT id FROM channel_deliveries WHERE status = 'pending'").length === 0, { timeoutMs: 20_000, what: "no pending delivery" });
    await new Promise((r) => setTimeout(r, 2000));

    const delivered = hits.filter((h) => h.answer === 200).map((h) => `${h.channel}: ${h.title} #${h.runNo}`).sort();
    assert.deepEqual(delivered, [
      ...FOUR.flatMap((n) => [`${n}: Green report #1`, `${n}: Red report #1`]),
      "flaky: Flaky hook #1", "limited: Slow down #1", "ops: Channels only #1",
      "twin: Twin runs #1", "twin: Twin runs #2", "twin: Twin runs #3",
    ].sort());
    assert.equal(hits.length, delivered.length + 4, "plus the 3 flaky failures and the 429, nothing else");
    assert.deepEqual(stray.map((r) => r.path.slice(0, 6)), [], "no request to any other path");
    const byNotice = new Map<string, Set<string>>();
    for (const h of hits) byNotice.set(`${h.channel} ${h.title} ${h.runNo}`, (byNotice.get(`${h.channel} ${h.title} ${h.runNo}`) ?? new Set()).add(h.key));
    assert.ok([...byNotice.values()].every((keys) => keys.size === 1), "one Idempotency-Key per notice");
    assert.ok(hits.every((h) => /^[0-9a-f-]{36}$/.test(h.key)), "an Idempotency-Key on every attempt");
    const vias = hits.map((h) => h.via);
    console.log(`requests sent by server a: ${vias.filter((v) => v === "a").length}, by server b: ${vias.filter((v) => v === "b").length}`);

    const rows = query("SELECT * FROM channel_deliveries ORDER BY automation_id, channel");
    assert.equal(rows.length, delivered.length);
    assert.deepEqual(rows.map((r) => r.id).sort(), [...byNotice.values()].flatMap((keys) => [...keys]).sort(), "the Idempotency-Key is the outbox row's id");
    assert.ok(rows.every((r) => r.status === "delivered" && r.last_error === null && r.host === `127.0.0.1:${receiver.port}`), JSON.stringify(rows));
    const attempts = Object.fromEntries(rows.filter((r) => r.attempts > 1).map((r) => [r.channel, r.attempts]));
    assert.deepEqual(attempts, { flaky: 4, limited: 2 });

    // notify: never: two runs, nothing sent anywhere (not even to the channels that work), nothing queued.
    assert.equal(ofTitle("Quiet one").length, 0);
    assert.equal(query("SELECT id FROM channel_deliveries WHERE automation_id = ?", ids.quiet).length, 0);
    assert.deepEqual(query("SELECT notified FROM automation_runs WHERE automation_id = ? ORDER BY id", ids.quiet).map((r) => r.notified), [0, 0]);
    assert.deepEqual(await automationNotes(a, parents.quiet!), []);
    // report: channels: the channel got it, the parent session nothing.
    const [only] = query("SELECT * FROM automation_runs WHERE automation_id = ?", ids.only);
    assert.equal(only.notified, 1);
    assert.match(only.notify_note, /channels ops$/);
    assert.equal(query("SELECT id FROM notifications WHERE parent_session_id = ?", parents.only).length, 0);
    assert.deepEqual(await automationNotes(a, parents.only!), []);
    // The control: a session-reporting automation's parent was told.
    assert.equal((await automationNotes(a, parents.limited!)).length, 1);
  });

  it("task_read shows each run's deliveries; URL paths and the secret appear in no log, table or answer", async () => {
    const reader = await a.newSession("reader");
    for (const key of ["green", "flaky", "limited", "only"]) await a.say(reader, call("task_read", { id: ids[key] }));
    const [green, flaky, limited, only] = await toolOutputs(a, reader, "task_read");
    const host = `127.0.0.1:${receiver.port}`;
    const deliveryLines = (out = "") => out.split("\n").filter((l) => l.startsWith("    "));
    assert.deepEqual(deliveryLines(green), ["bot", "ops", "phone", "team"].map((n) => `    ${n} (${host}): delivered`));
    assert.match(green!, /channels: team, phone, ops, bot \(and this session\)/);
    assert.deepEqual(deliveryLines(flaky), [`    flaky (${host}): delivered after 4 attempts`]);
    assert.deepEqual(deliveryLines(limited), [`    limited (${host}): delivered after 2 attempts`]);
    assert.match(only!, /channels: ops \(only: the session is not told\)/);

    const secrets = [...Object.values(TOKENS), SECRET, SECRET.slice("whsec_".length)];
    const places: [string, string][] = [
      ["task_read answers", [green, flaky, limited, only].join("\n")],
      ["server a output", a.server.logs()],
      ["server b output", b.server.logs()],
      ["server log files", await a.server.logFile()],
      ...["automation_runs", "channel_deliveries", "task_events", "automations", "notifications", "tasks"]
        .map((t) => [`table ${t}`, JSON.stringify(query(`SELECT * FROM ${t}`))] as [string, string]),
      ...[dbPath, `${dbPath}-wal`].filter(existsSync).map((f) => [`file ${f}`, readFileSync(f).toString("latin1")] as [string, string]),
    ];
    const table = (name: string) => places.find(([where]) => where === `table ${name}`)![1];
    assert.ok(table("automations").includes("Channels only") && table("channel_deliveries").includes("delivered"), "the tables were read");
    for (const [where, text] of places) {
      for (const secret of secrets) assert.ok(!text.includes(secret), `${where} holds a channel URL's token or the secret`);
    }
    // The refused URL was stored nowhere in the plugin's database either.
    for (const [where, text] of places.filter(([w]) => /^(table|file) /.test(w))) assert.ok(!text.includes(EVIL), `${where} holds the refused URL`);
  });
});

/** Which automation run a request is about, read as each format writes it. */
function identity(name: Name, r: Received): { title: string; runNo: number } {
  try {
    const m = (() => {
      switch (FORMATS[name]) {
        case "json": {
          const body = JSON.parse(r.body);
          return [, body.automation.title, body.run.no];
        }
        case "slack":
          return /^\*(.+?)\* run #(\d+) /.exec(JSON.parse(r.body).blocks[0].text.text);
        case "discord":
          return /^\S+ \*\*(.+?)\*\* run #(\d+) /.exec(JSON.parse(r.body).content);
        case "ntfy":
          return /^(.+) run #(\d+) /.exec(String(r.headers.title));
      }
    })();
    return { title: String(m?.[1] ?? "?"), runNo: Number(m?.[2] ?? 0) };
  } catch {
    return { title: "?", runNo: 0 };
  }
}
