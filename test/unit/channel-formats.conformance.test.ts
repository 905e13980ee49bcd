import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseChannels } from "../../src/channels/channel-config.ts";
import type { ChannelNotice } from "../../src/channels/channel-message.ts";
import type { ChannelConfig, ChannelFormat, ChannelRequest } from "../../src/channels/formats/channel-format.ts";
import { CHANNEL_FORMATS } from "../../src/channels/formats/registry.ts";

/**
 * Every registered channel format is held to the same contract: its example parses, its requests
 * have the shape the sender expects, the channel's URL token and secret never leak into a request
 * except where the format puts them, a long result stays within the receiver's limit, text from
 * the model can never become an option of a program, and bad config is refused naming the fix.
 */
const PLATFORMS: NodeJS.Platform[] = ["linux", "darwin", "win32"];
const TOKEN = "tokC0nformanceXYZ123";
const SECRET = "whsec_c2VjcmV0LWZvci10aGUtY29uZm9ybWFuY2Utc3VpdGU=";
const ATTACK = ["--help", "-e do shell script \"id\"", "$(touch /tmp/pwned) `id` ; rm -rf ~ | cat && echo 'x' \"y\" *"];

function notice(over: Partial<ChannelNotice> = {}): ChannelNotice {
  return {
    automation: { id: "au1", title: "Nightly tests" },
    run: { no: 3, id: 42 },
    status: "completed",
    trigger: "cron 0 9 * * 1-5, planned 2026-11-26T09:00:00Z",
    summary: "all 120 tests pass",
    result: "all 120 tests pass\nnothing else to report",
    taskId: "ses_child",
    dashboardUrl: "http://127.0.0.1:4321/automation?project=p&id=au1&run=3",
    ...over,
  };
}

/** The format's example with a token in its URL (as real webhook URLs carry) and a secret where it takes one. */
function secretConfig(f: ChannelFormat): ChannelConfig {
  return {
    ...f.example,
    ...(f.keys.includes("url") ? { url: `https://receiver.example/hooks/${TOKEN}` } : {}),
    ...(f.keys.includes("secret") ? { secret: SECRET } : {}),
  };
}

function requestOf(f: ChannelFormat, n: ChannelNotice, platform: NodeJS.Platform, config = secretConfig(f)): ChannelRequest {
  return f.request(n, config, { deliveryId: "d-1", now: Date.UTC(2026, 10, 26, 12), platform });
}

/** Every text a request carries but its URL. */
function carried(r: ChannelRequest): string[] {
  if (r.kind === "http") return [...Object.entries(r.headers).flat(), r.body];
  if (r.kind === "exec") return [r.program, ...r.args];
  return [r.reason];
}

function problemsOf(name: string, value: unknown): string {
  return parseChannels({ [name]: value }).problems.join("\n");
}

describe("channel format conformance", () => {
  it("the registry names each format once, in lower case", () => {
    const names = CHANNEL_FORMATS.map((f) => f.format);
    assert.equal(new Set(names).size, names.length);
    assert.ok(names.every((n) => /^[a-z][a-z0-9-]{0,19}$/.test(n)), names.join(", "));
    assert.ok(names.includes("desktop"));
  });

  for (const f of CHANNEL_FORMATS) {
    describe(`format ${f.format}`, () => {
      it("its example parses to itself through the channels option", () => {
        assert.deepEqual(parseChannels({ ex: f.example }), { channels: { ex: f.example }, problems: [] });
        assert.equal(f.example.format, f.format);
      });

      it("makes requests of the shape the sender knows, the same for the same input", () => {
        for (const platform of PLATFORMS) {
          const r = requestOf(f, notice(), platform);
          assert.deepEqual(requestOf(f, notice(), platform), r, "pure");
          if (r.kind === "http") {
            assert.equal(r.url, secretConfig(f).url);
            assert.equal(r.headers["Idempotency-Key"], "d-1");
            assert.ok(Object.values(r.headers).every((v) => typeof v === "string" && !/[\r\n]/.test(v)), "one-line headers");
            assert.ok(r.body.length > 0);
          } else if (r.kind === "exec") {
            assert.match(r.program, /^[a-z][\w.-]*$/, "a bare program name, looked up on PATH");
            assert.ok(r.args.every((a) => typeof a === "string" && !a.includes("\0")));
            assert.ok(r.dataFrom > 0 && r.dataFrom < r.args.length);
            const fence = r.args[r.dataFrom - 1]!;
            assert.ok(fence === "--" || !fence.startsWith("-"), `the data follows "--" or a fixed operand, not ${fence}`);
            assert.ok(r.args.slice(r.dataFrom).includes("Nightly tests"), "the title is an argument of its own");
          } else {
            assert.match(r.reason, /\w{10}/, "says why nothing is sent");
          }
        }
      });

      it("never puts the URL's token or the secret into what it carries (only the URL and a signature)", () => {
        for (const platform of PLATFORMS) {
          const r = requestOf(f, notice(), platform);
          for (const text of carried(r)) {
            assert.ok(!text.includes(TOKEN), `${f.format} on ${platform} carries the URL token`);
            assert.ok(!text.includes(SECRET) && !text.includes(SECRET.slice(6)), `${f.format} on ${platform} carries the secret`);
          }
          if (r.kind !== "http") assert.ok(!JSON.stringify(r).includes(TOKEN));
        }
      });

      it("keeps a long result within the receiver's limit, showing its beginning", () => {
        const long = `First line of a long result é🙂 <&>\n${"lorem ipsum dolor 🙂 é sit amet <&>\n".repeat(3000)}`;
        for (const status of ["completed", "error"] as const) {
          for (const platform of PLATFORMS) {
            const r = requestOf(f, notice({ status, summary: long.slice(0, 500), result: long, automation: { id: "au1", title: "T".repeat(300) } }), platform);
            if (r.kind === "none") continue;
            const size = f.limit.of(r);
            assert.ok(size > 0 && size <= f.limit.max, `${f.format}: ${size} > ${f.limit.max}`);
            assert.ok(carried(r).some((t) => t.includes("First line of a long result")), "the result's beginning is there");
          }
        }
      });

      it("carries an isolated run's branch (a format with a field for it sets it: json's branch, null without)", () => {
        const branch = "bg/au1-run-3-nightly";
        // As the run recorder builds it: the branch in the notice, and first in the result.
        const isolated = notice({ branch, result: `Changes on branch ${branch}.\nall 120 tests pass` });
        for (const platform of PLATFORMS) {
          const r = requestOf(f, isolated, platform);
          if (r.kind === "none") continue;
          assert.ok(carried(r).some((t) => t.includes(branch)), `${f.format} on ${platform} drops the branch`);
          const plain = requestOf(f, notice(), platform);
          assert.ok(carried(plain).every((t) => !t.includes("bg/")), "no branch named when the run left none");
          if (f.format === "json" && r.kind === "http" && plain.kind === "http") {
            assert.equal(JSON.parse(r.body).branch, branch);
            assert.equal(JSON.parse(plain.body).branch, null);
          }
        }
      });

      it("passes text from the model as data, never as a program's option", () => {
        for (const platform of PLATFORMS) {
          for (const attack of ATTACK) {
            const r = requestOf(f, notice({ automation: { id: "au1", title: attack }, result: attack, summary: attack }), platform);
            if (r.kind !== "exec") continue;
            assert.ok(r.args.slice(0, r.dataFrom).every((a) => !a.includes(attack) && !a.includes("rm -rf")), "nothing from the run before the data");
            assert.ok(r.args.slice(r.dataFrom).includes(attack), "the title, one literal argument");
          }
        }
      });

      it("refuses bad config with a message that names the key and the fix, quoting no URL or secret", () => {
        const example = f.example as Record<string, unknown>;
        for (const key of f.keys) {
          const message = problemsOf("x", { ...example, [key]: 42 });
          assert.match(message, new RegExp(`"channels\\.x\\.${key}" must .*(e\\.g\\.|got)`), `${key} = 42`);
        }
        for (const key of f.keys.filter((k) => k !== "secret")) {
          const { [key]: _gone, ...without } = example;
          assert.match(problemsOf("x", without), new RegExp(`"channels\\.x\\.${key}" must`), `${key} missing`);
        }
        assert.match(problemsOf("x", { ...example, token: TOKEN }), /"channels\.x" has an unknown key "token" \(known: format/);
        assert.doesNotMatch(problemsOf("x", { ...example, token: TOKEN }), new RegExp(TOKEN));
        const foreign = CHANNEL_FORMATS.flatMap((g) => g.keys).find((k) => !f.keys.includes(k));
        if (foreign) {
          assert.match(problemsOf("x", { ...example, [foreign]: `https://receiver.example/${TOKEN}` }), new RegExp(`"channels\\.x\\.${foreign}" is only for format .*; remove it from this "${f.format}" channel`));
          assert.doesNotMatch(problemsOf("x", { ...example, [foreign]: `https://receiver.example/${TOKEN}` }), new RegExp(TOKEN));
        }
        assert.deepEqual(parseChannels({ x: { ...example, token: 1 } }).channels, {}, "a refused channel is not kept");
      });
    });
  }
});
