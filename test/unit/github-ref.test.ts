import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { branchNameProblem } from "../../src/triggers/github-ref.ts";
import { parseTrigger, TriggerSpecError } from "../../src/automations/trigger-spec.ts";
import { feedsFor } from "../../src/triggers/github-feeds.ts";

const VALID = ["main", "release/1.2", "feature/a#b", "fix/100%", "a+b", "héllo/wörld", "x@y", "foo.bar", "v1.0-rc", "dependabot/npm_and_yarn/qs-6.5.3", "a.lock-not/b"];

/** Each invalid name, with what the refusal must name. */
const INVALID: Array<[string, RegExp]> = [
  ["../x", /"\.\."/],
  ["../../../../user/keys", /"\.\."/],
  ["a..b", /"\.\."/],
  ["/x", /starts with "\/"/],
  ["x/", /ends with "\/"/],
  ["a//b", /"\/\/"/],
  ["a\x01b", /control character/],
  ["a\x7fb", /control character/],
  ["a\nb", /control character/],
  ["a b", /a space/],
  ["a~1", /"~"/],
  ["a^2", /"\^"/],
  ["a:b", /":"/],
  ["a?", /"\?"/],
  ["a*", /"\*"/],
  ["a[b", /"\["/],
  ["a\\b", /"\\"/],
  [".hidden", /part "\.hidden" starts with "\."/],
  ["a/.b", /part "\.b" starts with "\."/],
  ["x.lock", /ends with "\.lock"/],
  ["a/b.lock/c", /part "b\.lock" ends with "\.lock"/],
  ["x.", /ends with "\."/],
  ["a@{1}", /"@\{"/],
  ["@", /single character "@"/],
  ["-x", /starts with "-"/],
  ["HEAD", /"HEAD"/],
  ["", /empty/],
  ["b".repeat(256), /255 bytes/],
];

describe("github ref: the rules of git check-ref-format --branch", () => {
  it("accepts ordinary and odd-but-valid branch names", () => {
    for (const name of VALID) assert.equal(branchNameProblem(name), undefined, name);
  });

  it("refuses each rule's breakers, naming the rule", () => {
    for (const [name, rule] of INVALID) {
      const problem = branchNameProblem(name);
      assert.ok(problem, `${JSON.stringify(name)} accepted`);
      assert.match(problem, rule, JSON.stringify(name));
    }
  });

  const git = spawnSync("git", ["--version"]).status === 0 ? false : "git is not installed";
  it("agrees with git itself: what git refuses is refused, what is accepted git accepts", { skip: git }, () => {
    for (const name of [...VALID, ...INVALID.map(([n]) => n)]) {
      const gitAccepts = spawnSync("git", ["check-ref-format", "--branch", name], { cwd: tmpdir() }).status === 0;
      const accepted = branchNameProblem(name) === undefined;
      if (accepted) assert.ok(gitAccepts, `accepted ${JSON.stringify(name)}, git refuses it`);
      if (!gitAccepts) assert.ok(!accepted, `git refuses ${JSON.stringify(name)}, accepted`);
    }
  });

  it('a github trigger with ref "../x" is refused naming the rule; a valid ref is kept', () => {
    const parse = (ref: string) => parseTrigger({ github: "acme/widgets", events: ["push"], ref }, Date.now());
    assert.throws(() => parse("../x"), (error: Error) => error instanceof TriggerSpecError && /"ref": "\.\.\/x" is not a valid branch name: it contains "\.\."/.test(error.message) && /git check-ref-format/.test(error.message));
    assert.throws(() => parse("main\u0000"), /control character/);
    assert.deepEqual((parse(" release/1.2 ") as { ref?: string }).ref, "release/1.2");
  });

  it("an odd-but-valid ref is percent-encoded per path segment, and as a whole in a query", () => {
    assert.equal(branchNameProblem("feature/a#b%c"), undefined);
    const [push, runs] = feedsFor("acme/widgets", ["push", "ci_failed"], "feature/a#b%c").map((f) => f.path);
    assert.equal(push, "/repos/acme/widgets/branches/feature/a%23b%25c");
    assert.equal(runs, "/repos/acme/widgets/actions/runs?branch=feature%2Fa%23b%25c&per_page=30");
  });
});

describe("webhook trigger: the secret is the plugin's", () => {
  it("a secret in the trigger is refused, naming the CLI command that sets one", () => {
    assert.throws(
      () => parseTrigger({ webhook: "deploy", secret: "whsec_chosen-by-the-model-123" }, Date.now()),
      (error: Error) => error instanceof TriggerSpecError && error.message.includes("opencode-errands webhooks set-secret deploy") && !error.message.includes("chosen-by-the-model"),
    );
    assert.deepEqual(parseTrigger({ webhook: "deploy" }, Date.now()), { kind: "webhook", name: "deploy" });
  });
});
