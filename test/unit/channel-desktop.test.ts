import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, afterEach, describe, it } from "node:test";
import { ChannelDelivery, type ChannelDeliveryOptions } from "../../src/channels/channel-delivery.ts";
import type { ChannelNotice } from "../../src/channels/channel-message.ts";
import { deliveryStatusText } from "../../src/channels/channel-queue.ts";
import { newClaimer } from "../../src/core/claims.ts";
import { ChannelOutboxRepository } from "../../src/store/channel-outbox-repository.ts";
import { desktop } from "../../src/channels/formats/desktop.ts";
import { migrate } from "../../src/store/migrations.ts";
import { openSqlite } from "../../src/store/sqlite-driver.ts";
import { FakeClock } from "../helpers/fake-clock.ts";
import { fakeProgram, type FakeProgram } from "../helpers/fake-program.ts";

const dir = mkdtempSync(join(tmpdir(), "ocbt-desktop-"));
const cleanups: (() => unknown)[] = [];
const PATH = process.env.PATH;
let runNo = 0;
after(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
  process.env.PATH = PATH;
});

function notice(over: Partial<ChannelNotice> = {}): ChannelNotice {
  const no = ++runNo;
  return {
    automation: { id: "au1", title: "Nightly tests" }, run: { no, id: 100 + no }, status: "completed",
    trigger: "every 1h", summary: "all pass", result: "all 120 pass\n\nin 3 s\nline 3\nline 4\nline 5", ...over,
  };
}

const request = (n: ChannelNotice, platform: NodeJS.Platform) => desktop.request(n, { format: "desktop" }, { deliveryId: "d", now: 0, platform });

/** A delivery to one desktop channel "desk", on a fake clock; `run` queues notices and waits until their attempts ended. */
function deliveryTo(platform: NodeJS.Platform, over: Partial<ChannelDeliveryOptions> = {}) {
  const db = openSqlite(join(dir, `db${runNo}-${platform}.db`));
  migrate(db);
  const logs: string[] = [];
  const clock = new FakeClock();
  const d = new ChannelDelivery({ outbox: new ChannelOutboxRepository(db, "p", newClaimer()), channels: { desk: { format: "desktop" } }, clock, platform, log: (m) => logs.push(m), ...over });
  cleanups.push(() => db.close(), () => d.stop());
  d.start();
  const run = async (...notices: ChannelNotice[]) => {
    for (const n of notices) db.transaction(() => d.enqueue(n, ["desk"]));
    await clock.advance(0);
    await d.idle();
    return notices.map((n) => d.status(n.run.id).map((s) => deliveryStatusText(s, clock.now())));
  };
  return { run, logs };
}

function onPath(name: string): FakeProgram {
  const fake = fakeProgram(name);
  cleanups.push(() => fake.remove());
  process.env.PATH = `${fake.dir}:${PATH}`;
  return fake;
}

describe("the desktop channel format", () => {
  it("Linux: notify-send with the title as summary and the first lines as body, after --", () => {
    assert.deepEqual(request(notice(), "linux"), {
      kind: "exec", program: "notify-send", dataFrom: 3,
      args: ["--app-name=opencode-errands", "--urgency=normal", "--", "Nightly tests", "all 120 pass\nin 3 s\nline 3\nline 4 …"],
    });
    const failed = request(notice({ status: "error", result: "Error: boom <a href=x>&" }), "linux");
    assert.deepEqual(failed.kind === "exec" && failed.args.slice(1), ["--urgency=critical", "--", "Nightly tests", "Error: boom &lt;a href=x&gt;&amp;"]);
  });

  it("macOS: osascript reads the title and body from argv after a fixed operand; nowhere else: nothing", () => {
    const r = request(notice({ result: 'say "hi" & -e x' }), "darwin");
    assert.deepEqual(r, {
      kind: "exec", program: "osascript", dataFrom: 7,
      args: ["-e", "on run argv", "-e", "display notification (item 3 of argv) with title (item 2 of argv)", "-e", "end run", "opencode-errands", "Nightly tests", 'say "hi" & -e x'],
    });
    const none = request(notice(), "win32");
    assert.equal(none.kind, "none");
    assert.match(none.kind === "none" ? none.reason : "", /notify-send \(Linux\) or osascript \(macOS\).*win32: nothing is sent; remove the channel or use ntfy/);
  });

  it("control characters and a NUL never reach an argument; an empty result shows the summary", () => {
    const r = request(notice({ automation: { id: "au1", title: "A\nB\u0000C\u001b[31m" }, result: "x\u0000y\r\nz" }), "linux");
    assert.deepEqual(r.kind === "exec" && r.args.slice(3), ["A B C [31m", "x y\nz"]);
    const empty = request(notice({ result: "  ", summary: "nothing to say" }), "linux");
    assert.equal(empty.kind === "exec" && empty.args.at(-1), "nothing to say");
  });
});

describe("desktop deliveries", { timeout: 30_000 }, () => {
  it("runs notify-send once per run, without a shell: the arguments arrive as given", async () => {
    const fake = onPath("notify-send");
    const { run, logs } = deliveryTo("linux");
    const evil = "-rf $(touch /tmp/pwned) `id`; echo hi | cat > x && exit 3 * ?";
    const status = await run(notice(), notice({ automation: { id: "au1", title: "--help" }, result: evil }));
    assert.deepEqual(status, [["desk (this computer): delivered"], ["desk (this computer): delivered"]]);
    assert.deepEqual(fake.calls().map((args) => args.slice(2)), [
      ["--", "Nightly tests", "all 120 pass\nin 3 s\nline 3\nline 4 …"],
      ["--", "--help", "-rf $(touch /tmp/pwned) `id`; echo hi | cat &gt; x &amp;&amp; exit 3 * ?"],
    ]);
    assert.deepEqual(logs, []);
  });

  it("a failing or missing notify-send fails the delivery, named, and it is not retried", async () => {
    const fake = onPath("notify-send");
    fake.exitWith(4);
    const { run } = deliveryTo("linux");
    assert.deepEqual(await run(notice()), [["desk (this computer): FAILED after 1 attempt: notify-send ended with exit code 4"]]);
    assert.equal(fake.calls().length, 1);
    process.env.PATH = dir;
    const missing = deliveryTo("linux");
    assert.deepEqual(await missing.run(notice()), [["desk (this computer): FAILED after 1 attempt: notify-send is not on the PATH of the OpenCode process: install it, or remove the channel"]]);
  });

  it("on a system without either program: one warning in the log, nothing run, each delivery failed with the reason", async () => {
    const fake = onPath("notify-send");
    const { run, logs } = deliveryTo("win32");
    const status = await run(notice(), notice(), notice());
    assert.ok(status.every(([line]) => /^desk \(this computer\): FAILED after 1 attempt: desktop notifications need notify-send/.test(line!)), status.join("\n"));
    assert.equal(fake.calls().length, 0);
    assert.equal(logs.length, 1, logs.join("\n"));
    assert.match(logs[0]!, /^Channels of format "desktop": desktop notifications need notify-send \(Linux\) or osascript \(macOS\)/);
  });
});
