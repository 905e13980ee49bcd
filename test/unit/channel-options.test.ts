import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { OptionsError, parseOptions } from "../../src/options/options.ts";
import { channelLabel } from "../../src/channels/channel-config.ts";

const SLACK = "https://hooks.slack.com/services/T000/B000/XXXXsecretpath";
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

function problemsOf(channels: unknown): string {
  try {
    parseOptions({ channels });
  } catch (error) {
    assert.ok(error instanceof OptionsError);
    return error.message;
  }
  assert.fail("no error");
}

describe("the channels option", () => {
  it("takes the four formats, a json secret, and defaults to none", () => {
    assert.deepEqual(parseOptions({}).channels, {});
    const channels = {
      team: { url: SLACK, format: "slack" },
      phone: { url: "https://ntfy.sh/my-topic", format: "ntfy" },
      ops: { url: "https://discord.com/api/webhooks/1/abc", format: "discord" },
      bot: { url: "http://127.0.0.1:9000/in", format: "json", secret: SECRET },
    };
    assert.deepEqual(parseOptions({ channels }).channels, channels);
    assert.equal(channelLabel("team", channels.team), "team (hooks.slack.com)");
  });

  it("names each fault and the fix, and never quotes a URL or a secret", () => {
    const message = problemsOf({
      a: { url: "hooks.slack.com/services/XXXXsecretpath", format: "slack" },
      b: { url: "ftp://files.example.com/XXXXsecretpath", format: "json" },
      c: { url: SLACK, format: "teams" },
      d: { url: SLACK, format: "slack", secret: SECRET },
      e: { url: "https://user:XXXXsecretpath@ntfy.example.com/t", format: "ntfy" },
      f: SLACK,
      g: { url: SLACK, format: "json", secret: "short" },
      h: { url: SLACK, format: "slack", token: "XXXXsecretpath" },
      "bad name": { url: SLACK, format: "slack" },
      i: { url: SLACK, format: SLACK },
    });
    assert.match(message, /"channels\.a\.url" is not a valid URL: write it in full/);
    assert.match(message, /"channels\.b\.url" must start with https:\/\/ or http:\/\/, got a URL with scheme ftp:/);
    assert.match(message, /"channels\.c\.format" must be one of "slack", "ntfy", "discord", "json", "desktop", got "teams"/);
    assert.match(message, /"channels\.d\.secret" is only for format "json"/);
    assert.match(message, /"channels\.e\.url" on host ntfy\.example\.com must not carry a user name or password/);
    assert.match(message, /"channels\.f" must be an object with a "format" and that format's keys, e\.g\. \{"format":"slack","url":.* or \{"format":"desktop"\}, got a string/);
    assert.match(message, /"channels\.g\.secret" must be "whsec_" followed by base64, or at least 16 characters/);
    assert.match(message, /"channels\.h" has an unknown key "token"/);
    assert.match(message, /channel name "bad name" must be 1-40 letters/);
    assert.match(message, /"channels\.i\.format" must be one of .*, got a string/);
    assert.doesNotMatch(message, /XXXXsecretpath|MfKQ9r8G|T000/);
  });

  it("refuses a channels value that is not an object", () => {
    assert.match(problemsOf([SLACK]), /"channels" must be an object of named channels.*got an array/);
    assert.doesNotMatch(problemsOf([SLACK]), /XXXXsecretpath/);
  });
});
