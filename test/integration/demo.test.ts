/**
 * The README's first command: `npm run demo` must show the product end to end on the bundled
 * mock model (a batch, a resume, an automation reporting back, evidence, the dashboard) in under
 * 30 s. Runs it as a user would, reads what it prints, and opens the dashboard it announces.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { PACKAGE_DIR, waitUntil } from "../harness/plugin-stack.ts";

const DEMO_LIMIT_MS = 30_000;
const DASHBOARD_LINE = /dashboard \(plugin option dashboardPort: \d+\): (http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+)/;

type Demo = { output(): string; waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>; exited: Promise<{ code: number | null; signal: string | null }>; interrupt(): void; stop(): void };

function startDemo(args: string[] = []): Demo {
  // node itself, not npx: a signal must reach the demo's own process.
  const child = spawn(process.execPath, ["--import", "tsx", "demo/run.ts", ...args], { cwd: PACKAGE_DIR, env: { ...process.env, NO_COLOR: "1" } });
  let text = "";
  child.stdout.on("data", (chunk) => (text += chunk));
  child.stderr.on("data", (chunk) => (text += chunk));
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  return {
    output: () => text,
    waitFor: (pattern, timeoutMs = 60_000) => waitUntil(() => pattern.exec(text), { timeoutMs, intervalMs: 50, what: `${pattern} in the demo's output:\n${text}` }),
    exited,
    interrupt: () => child.kill("SIGINT"),
    // SIGTERM, not SIGKILL: the harness then kills the server on its way out.
    stop: () => child.kill("SIGTERM"),
  };
}

/** Resolves once nothing answers at `url` any more. */
function gone(url: string): Promise<boolean> {
  return waitUntil(() => fetch(url).then(() => false, () => true), { timeoutMs: 5_000, what: `${url} to stop answering` });
}

/** Opens the dashboard as a browser would (the token is exchanged for a cookie) and returns the home page. */
async function openDashboard(url: string): Promise<{ status: number; body: string }> {
  const signIn = await fetch(url, { redirect: "manual" });
  assert.equal(signIn.status, 303, "the token URL signs in");
  const cookie = signIn.headers.get("set-cookie")!.split(";")[0]!;
  const home = await fetch(new URL("/", url), { headers: { cookie } });
  return { status: home.status, body: await home.text() };
}

test("npm run demo shows a batch, a resume, an automation reporting twice, evidence and a live dashboard, in under 30 s", async (t) => {
  const started = Date.now();
  const demo = startDemo();
  t.after(() => demo.stop());
  const [, url] = await demo.waitFor(DASHBOARD_LINE);
  const early = await openDashboard(url!);
  assert.equal(early.status, 200, "the dashboard answers while the demo runs");
  await demo.waitFor(/automation created/);
  const populated = await openDashboard(url!);
  assert.equal(populated.status, 200);
  assert.match(populated.body, /clock check/, "the automation is on the page");
  assert.match(populated.body, /summarise the README/, "the tasks are on the page");

  const { code } = await demo.exited;
  const tookMs = Date.now() - started;
  const out = demo.output();
  assert.equal(code, 0, out);
  assert.ok(tookMs < DEMO_LIMIT_MS, `the demo took ${tookMs} ms:\n${out}`);
  assert.match(out, /parent notified about task A completed -> delivered quietly, no parent turn/);
  assert.match(out, /parent notified about task B completed -> started a parent turn/);
  assert.match(out, /\| Evidence: Commands: echo hi \(exit 0\)/, "task A's evidence, in the notification shown whole");
  assert.match(out, /^\s+Evidence: Files: summary\.md \(created, \d+ B, verified\)$/m, "task B's evidence line: the file it wrote, checked on disk");
  assert.match(out, /resume launched: Resumed background task ses_\w+ \(resume #1\)/);
  assert.match(out, /OpenCode asks the user: permission background_automation for "clock check" \(every 2s\)/);
  assert.match(out, /the user approved it/);
  assert.match(out, /automation created: Created automation au\w+ "clock check" \(enabled; notify always\)/);
  for (const run of [1, 2]) {
    assert.match(out, new RegExp(`automation run #${run} progress: tool call bash "date \\+%T" -> "\\d\\d:\\d\\d:\\d\\d"`));
    assert.match(out, new RegExp(`parent notified about automation run #${run} completed \\(the automation reports back\\)\\n.*Automation "clock check" run #${run} `));
  }
  assert.match(out, /5 notifications reached the parent; 4 of them started a parent turn\./);
  await gone(url!);
});

test("npm run demo -- --keep leaves the server and a populated dashboard up until Ctrl-C", async (t) => {
  const demo = startDemo(["--keep"]);
  t.after(() => demo.stop());
  const [, url] = await demo.waitFor(DASHBOARD_LINE);
  await demo.waitFor(/Press Ctrl-C to stop both/);
  const [, server] = /opencode server: (http:\/\/\S+)/.exec(demo.output())!;
  const page = await openDashboard(url!);
  assert.equal(page.status, 200);
  assert.match(page.body, /clock check/);
  assert.match(page.body, /say hi with bash/);
  assert.equal((await fetch(`${server}/session`)).status, 200, "the OpenCode server still answers");

  demo.interrupt();
  const { code } = await demo.exited;
  assert.equal(code, 130, demo.output());
  assert.match(demo.output(), /SIGINT: stopping the server and its dashboard/);
  await gone(url!);
  await gone(`${server}/session`);
});
