import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { automationFixture, tempDb, PARENT, MODEL } from "../helpers/automation-fixture.ts";
import { automationTools } from "../../src/tools/build-tools.ts";
import { commandHandler } from "../../src/inbox/apply-command.ts";
import { CommandInbox } from "../../src/inbox/command-inbox.ts";
import { InboxApplier } from "../../src/inbox/inbox-applier.ts";
import { TaskReader } from "../../src/store/task-reader.ts";
import { routePage } from "../../src/dashboard/dashboard-routes.ts";
import { startDashboard } from "../../src/dashboard/dashboard-server.ts";
import { main } from "../../src/cli/main.ts";
import { PROPOSAL_EXPIRY_MS } from "../../src/proposals/proposal-rules.ts";
import type { InboxCommand } from "../../src/inbox/inbox-command.ts";
import type { CliIo } from "../../src/cli/cli-io.ts";
import type { SqliteTaskStore } from "../../src/store/sqlite-task-store.ts";

/** The plugin side on a fake host and clock, with the tools the model calls, on a database file of its own. */
function setup() {
  const db = tempDb();
  const f = automationFixture(db.path);
  after(() => { f.close(); db.cleanup(); });
  f.host.setActivity(PARENT, "idle");
  f.service.start();
  const tools = automationTools(f.service, (m) => f.crashes.push(m));
  const asked: string[] = [];
  const call = async (name: string, args: unknown) => String(await tools[name]!.execute(args as never, {
    sessionID: PARENT, messageID: "msg_1", agent: "build", abort: new AbortController().signal,
    extra: { model: { id: MODEL.modelID, providerID: MODEL.providerID } }, ask: async (input: { permission: string }) => void asked.push(input.permission),
  } as never));
  const propose = async (args: Record<string, unknown> = {}) => {
    const out = await call("task_propose", {
      title: "watch the deploy", reason: "You started a deploy; a failure would go unnoticed.", prompt: "Check the deploy status and report failures",
      triggers: [{ every: "10m" }], ...args,
    });
    const id = /automation (au\w+)/.exec(out)?.[1];
    assert.ok(id, out);
    return id;
  };
  const handler = commandHandler(f.manager, f.service, f.host);
  const command = (kind: InboxCommand["kind"], targetId: string, source: InboxCommand["source"] = "dashboard"): InboxCommand =>
    ({ id: 1, projectId: "proj", kind, targetId, source, status: "pending", createdAt: f.clock.now() });
  const pluginDb = (f.store as SqliteTaskStore).db;
  const decisions = () => f.service.proposals!.store.decisions(0).map((d) => `${d.outcome} via ${d.via}`);
  return { f, db, pluginDb, call, asked, propose, handler, command, decisions };
}

describe("proposals on the dashboard pages", () => {
  it("home lists each proposal under needs attention with reason, triggers, prompt, step commands, proposer, expiry and Approve / Reject; the title counts them", async () => {
    const { f, db, call, propose } = setup();
    await call("task_create", { title: "nightly", prompt: "summarise", triggers: [{ every: "1h" }] });
    const deploy = await propose({ steps: [{ name: "status", run: "gh run list --limit 1" }] });
    const risky = await propose({ title: "odd <b>one</b>", reason: "Because <script>alert(1)</script>", prompt: "Look at <img src=x>", triggers: [{ cron: "0 9 * * *" }] });
    const reader = TaskReader.open(db.path);
    try {
      const { body } = routePage(reader, new URL("http://127.0.0.1/?project=proj"), f.clock.now());
      assert.match(body, /<title>\(2\) 2 proposals · Home · background tasks<\/title>/);
      assert.match(body, /<h2>Needs attention \(2\)<\/h2>/);
      const item = body.split(`data-proposal="${deploy}"`)[1]!.split("</article>")[0]!;
      assert.match(item, /You started a deploy; a failure would go unnoticed\./);
      assert.match(item, /class="triggers">every 10m</);
      assert.match(item, /Check the deploy status and report failures/);
      assert.match(item, /<code>gh run list --limit 1<\/code>/);
      assert.match(item, new RegExp(`the agent in session ${PARENT}`));
      assert.ok(item.includes(`data-ts="${f.clock.now() + PROPOSAL_EXPIRY_MS}"`), "expiry time");
      assert.match(item, new RegExp(`name="kind" value="approve">[\\s\\S]*name="target" value="${deploy}"[\\s\\S]*data-kind="approve"`));
      assert.match(item, /data-kind="reject" data-confirm="Reject this proposal\?/);
      assert.ok(!body.includes("<script>alert") && !body.includes("<img src=x") && body.includes("Because &lt;script&gt;"), "escaped");
      assert.match(body, new RegExp(`data-automation="${risky}"[\\s\\S]*?<span class="status s-proposed">proposed</span>`), "the automations table marks it");
      assert.match(body, /data-automation="au\w+"><td><a [^>]*>nightly<\/a>[\s\S]*?s-enabled/);
    } finally {
      reader.close();
    }
  });

  it("a proposal's own page says it is a proposal (not paused) and offers only Approve and Reject", async () => {
    const { f, db, propose } = setup();
    const id = await propose();
    const reader = TaskReader.open(db.path);
    try {
      const { status, body } = routePage(reader, new URL(`http://127.0.0.1/automation?project=proj&id=${id}`), f.clock.now());
      assert.equal(status, 200);
      const controls = body.split('id="automation-controls"')[1]!.split('id="automation-details"')[0]!;
      assert.match(controls, /s-proposed">proposed<\/span> — <span id="proposal-note">a proposal from the agent, waiting for your decision/);
      assert.match(controls, /You started a deploy/);
      assert.doesNotMatch(controls, /paused/);
      assert.deepEqual([...controls.matchAll(/data-kind="(\w+)"/g)].map((m) => m[1]), ["approve", "reject"]);
      assert.match(body, /<title>\(1\) watch the deploy/);
    } finally {
      reader.close();
    }
  });

  it("the page's Approve posts an approve command to the inbox, marked as the dashboard's", async () => {
    const { db, propose } = setup();
    const id = await propose();
    const dash = await startDashboard({ dbPath: db.path, port: 0, host: "127.0.0.1", token: "t0ken-for-the-test" });
    try {
      const signIn = await fetch(`${dash.url}`, { redirect: "manual" });
      const cookie = String(signIn.headers.get("set-cookie")).split(";")[0]!;
      const res = await fetch(`${dash.origin}/command`, {
        method: "POST", redirect: "manual", body: new URLSearchParams({ kind: "approve", project: "proj", target: id, back: "/" }),
        headers: { cookie, origin: dash.origin, "content-type": "application/x-www-form-urlencoded" },
      });
      assert.equal(res.status, 303);
      const reader = TaskReader.open(db.path);
      try {
        assert.deepEqual(reader.commands("proj").map((c) => [c.kind, c.targetId, c.source, c.status]), [["approve", id, "dashboard", "pending"]]);
      } finally {
        reader.close();
      }
    } finally {
      await dash.close();
    }
  });
});

describe("proposal commands applied by the plugin", () => {
  it("approve enables it with no permission asked, records the source, and it fires", async () => {
    const { f, asked, propose, handler, command, decisions } = setup();
    const id = await propose();
    assert.match(await handler.apply(command("approve", id)), /^Approved "watch the deploy": enabled; it runs at its triggers/);
    assert.deepEqual(asked, [], "the user's click is the approval");
    assert.equal(f.service.get(id)!.enabled, true);
    assert.equal(f.service.get(id)!.proposal, undefined);
    assert.deepEqual(decisions(), ["approved via dashboard"]);
    await f.clock.advance(10 * 60_000);
    assert.equal(f.children().length, 1, "it fired");
    await assert.rejects(handler.apply(command("approve", id)), /is not a proposal \(it was approved already\): nothing to approve/);
  });

  it("reject deletes it and starts the cooldown; delete of a proposal rejects it; pause, resume and run now are refused", async () => {
    const { f, call, propose, handler, command, decisions } = setup();
    const id = await propose();
    for (const kind of ["resume", "pause", "run_now"] as const) {
      await assert.rejects(handler.apply(command(kind, id)), /is a proposal: approve or reject it/);
    }
    assert.ok(f.service.get(id)!.proposal, "still a proposal, still disabled");
    assert.equal(f.service.get(id)!.enabled, false);
    assert.match(await handler.apply(command("reject", id, "cli")), /^Rejected "watch the deploy": deleted; proposing the same again is refused for 24 h/);
    assert.equal(f.service.get(id), undefined);
    assert.match(await call("task_propose", { title: "watch the deploy", reason: "again", prompt: "x" }), /rejected 0 h ago \(via cli\)/);
    const other = await propose({ title: "another", prompt: "something else entirely", triggers: [{ every: "1h" }] });
    await handler.apply(command("delete", other));
    assert.deepEqual(decisions(), ["rejected via dashboard", "rejected via cli"]);
  });

  it("the command's source survives the inbox table (migration 14)", async () => {
    const { f, pluginDb, propose, handler } = setup();
    const id = await propose();
    const inbox = new CommandInbox(pluginDb);
    const written = inbox.submit("proj", "approve", id, f.clock.now(), "cli");
    assert.equal(inbox.get(written.id)!.source, "cli");
    assert.equal(inbox.submit("proj", "pause", "au_x", f.clock.now()).source, "dashboard", "the dashboard's default");
    assert.match(await handler.apply(inbox.get(written.id)!), /Approved/);
    assert.equal(f.service.proposals!.store.decisions(0)[0]!.via, "cli");
  });
});

describe("CLI: proposals", () => {
  /** Runs the CLI in-process; `onWait` runs at each of its polls (the plugin's applier, or time passing). */
  async function cli(argv: string[], now: () => number, onWait: () => Promise<void> = async () => {}) {
    let stdout = "";
    let stderr = "";
    const io: CliIo = { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), env: {}, now, sleep: onWait };
    const code = await main(argv, io);
    return { code, stdout, stderr };
  }

  it("lists proposals with id, title, triggers, reason, proposer and expiry; --json for machines", async () => {
    const { f, db, call, propose } = setup();
    await call("task_create", { title: "nightly", prompt: "summarise", triggers: [{ every: "1h" }] });
    const id = await propose();
    const table = await cli(["proposals", "--db", db.path], () => f.clock.now());
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^ID +TITLE +TRIGGERS +REASON +PROPOSED BY +EXPIRES +PROJECT\n/);
    const expires = new Date(f.clock.now() + PROPOSAL_EXPIRY_MS).toISOString().replace(/\.\d{3}Z$/, "Z");
    assert.match(table.stdout, new RegExp(`${id} +watch the deploy +every 10m +You started a deploy; a failure would go unnoticed\\. +conversation ${PARENT} +${expires} +proj`));
    assert.doesNotMatch(table.stdout, /nightly/);
    assert.match(table.stdout, /proposals approve <id>/);
    const json = JSON.parse((await cli(["proposals", "--db", db.path, "--json"], () => f.clock.now())).stdout);
    assert.deepEqual(json.map((a: { id: string; proposal: { reason: string }; expiresAt: number }) => [a.id, a.proposal.reason, a.expiresAt]),
      [[id, "You started a deploy; a failure would go unnoticed.", f.clock.now() + PROPOSAL_EXPIRY_MS]]);
    const later = await cli(["proposals", "--db", db.path], () => f.clock.now() + PROPOSAL_EXPIRY_MS);
    assert.match(later.stdout, / expired +proj/, "past its expiry, until the plugin removes it");
  });

  it("approve <prefix> is applied by the project's OpenCode: the CLI prints its outcome, and the decision says cli", async () => {
    const { f, db, pluginDb, propose, handler, decisions } = setup();
    const id = await propose();
    const applier = new InboxApplier(pluginDb, "proj", handler, f.clock, (m, e) => assert.fail(`${m}: ${e}`));
    const plugin = async () => { applier.check(); await applier.idle(); };
    const out = await cli(["proposals", "approve", id.slice(0, 6), "--db", db.path], () => f.clock.now(), plugin);
    assert.deepEqual([out.code, out.stderr], [0, ""]);
    assert.match(out.stdout, /^Approved "watch the deploy": enabled; it runs at its triggers and reports to session ses_parent/);
    assert.equal(f.service.get(id)!.enabled, true);
    assert.deepEqual(decisions(), ["approved via cli"]);
    const again = await cli(["proposals", "approve", id, "--db", db.path], () => f.clock.now(), plugin);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /is not a proposal \(it was approved already/);
  });

  it("a refusal by the plugin is printed and exits 1", async () => {
    const { f, db, pluginDb, propose } = setup();
    const id = await propose();
    const refusing = { apply: async () => { throw new Error("Proposals are unavailable in this OpenCode process."); }, owns: async () => true };
    const applier = new InboxApplier(pluginDb, "proj", refusing, f.clock, () => {});
    const out = await cli(["proposals", "reject", id, "--db", db.path], () => f.clock.now(), async () => { applier.check(); await applier.idle(); });
    assert.equal(out.code, 1);
    assert.match(out.stderr, /Rejecting au\w+ "watch the deploy" failed: Proposals are unavailable/);
  });

  it("with no OpenCode of the project running it says the decision is queued and how to check, exit 0", async () => {
    const { f, db, propose } = setup();
    const id = await propose();
    let now = f.clock.now();
    let polls = 0;
    const out = await cli(["proposals", "reject", id, "--db", db.path], () => now, async () => void ((now += 100), polls++));
    assert.equal(out.code, 0, out.stderr);
    assert.equal(polls, 50, "about 5 s of polling");
    assert.match(out.stdout, new RegExp(`Rejecting ${id} "watch the deploy": queued \\(command \\d+\\)\\. No OpenCode running in project proj took it within 5 s; it is applied when OpenCode next runs there\\. Check with \`opencode-background-tasks proposals\``));
    const reader = TaskReader.open(db.path);
    try {
      assert.deepEqual(reader.commands("proj").map((c) => [c.kind, c.targetId, c.source, c.status]), [["reject", id, "cli", "pending"]]);
    } finally {
      reader.close();
    }
    assert.ok(f.service.get(id)!.proposal, "nothing applied yet");
  });

  it("an unknown id or an automation that is not a proposal is a clear error, exit 1, and nothing is written", async () => {
    const { f, db, call, propose } = setup();
    await propose();
    const created = await call("task_create", { title: "nightly", prompt: "summarise", triggers: [{ every: "1h" }] });
    const plain = /automation (au\w+)/.exec(created)![1]!;
    const unknown = await cli(["proposals", "approve", "zzz", "--db", db.path], () => f.clock.now());
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /No proposal has an id starting with 'zzz'\. Run `opencode-background-tasks proposals` to see them\./);
    const notProposal = await cli(["proposals", "reject", plain, "--db", db.path], () => f.clock.now());
    assert.equal(notProposal.code, 1);
    assert.match(notProposal.stderr, /"nightly" is not a proposal/);
    const ambiguous = await cli(["proposals", "approve", "au", "--db", db.path], () => f.clock.now());
    assert.equal(ambiguous.code, 1);
    assert.match(ambiguous.stderr, /'au' matches 2 automations; give more of the id/);
    for (const [argv, message] of [[["proposals", "frob"], /Unknown proposals action 'frob'/], [["proposals", "approve"], /needs a proposal id/], [["proposals", "reject", "a", "b"], /takes one proposal id/]] as const) {
      const r = await cli([...argv, "--db", db.path], () => f.clock.now());
      assert.equal(r.code, 2);
      assert.match(r.stderr, message);
    }
    const reader = TaskReader.open(db.path);
    try {
      assert.deepEqual(reader.commands(), [], "nothing written");
    } finally {
      reader.close();
    }
  });
});
