import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { toolCallInfo, filesAboutToBeWritten } from "../../src/host/tool-call-info.ts";
import { normalizeEvent } from "../../src/host/normalize-event.ts";
import { maskSecrets } from "../../src/core/mask-secrets.ts";
import { findContradictions } from "../../src/evidence/contradiction-check.ts";

// Tool parts captured from a real OpenCode 1.18.33 (write, a failing edit, bash exit 3, a failing read, an edit, bash).
const parts = JSON.parse(readFileSync(new URL("../fixtures/tool-parts.json", import.meta.url), "utf8")) as any[];
const final = (tool: string, status: string) => parts.filter((p) => p.tool === tool && p.state.status === status).map(toolCallInfo);

describe("tool parts from the real host", () => {
  it("write: the file and whether it was new (metadata.exists false = created)", () => {
    const [write] = final("write", "completed");
    assert.deepEqual(write!.files, [{ path: "report.md", action: "created" }]);
    assert.equal(write!.status, "completed");
  });

  it("bash: command, exit code and duration from time.start/end", () => {
    const [bash] = final("bash", "completed");
    assert.equal(bash!.command, "echo out; exit 3");
    assert.equal(bash!.exitCode, 3);
    assert.ok(bash!.endedAt! > bash!.startedAt!);
  });

  it("edit: lines added and removed; a failed edit has its error's first line and no file", () => {
    const [edit] = final("edit", "completed");
    assert.deepEqual([edit!.additions, edit!.deletions], [1, 1]);
    const [failed] = final("edit", "error");
    assert.match(failed!.error!, /^File \/tmp\/ocbt-fixture\/project\/report\.md not found$/);
  });

  it("pending parts have no input yet; running ones do, with equal input keys for equal inputs", () => {
    const pending = parts.find((p) => p.state.status === "pending");
    assert.deepEqual(toolCallInfo(pending).files, []);
    const running = parts.filter((p) => p.tool === "write").map(toolCallInfo).filter((c) => c.status !== "pending");
    assert.equal(running[0]!.inputKey, running[1]!.inputKey);
  });

  it("the normalised event carries the call; a patch names every file it touches", () => {
    const event = normalizeEvent({ type: "message.part.updated", properties: { part: parts.at(-1) } });
    assert.equal(event?.type === "tool" && event.call?.status, "running");
    const patch = "*** Begin Patch\n*** Add File: a.md\n+x\n*** Update File: src/b.ts\n@@\n*** Delete File: old.txt\n*** End Patch";
    assert.deepEqual(filesAboutToBeWritten("apply_patch", { patchText: patch }), ["a.md", "src/b.ts", "old.txt"]);
    assert.deepEqual(filesAboutToBeWritten("write", { filePath: "x.md", content: "" }), ["x.md"]);
    assert.deepEqual(filesAboutToBeWritten("read", { filePath: "x.md" }), []);
  });
});

describe("masking secrets", () => {
  const samples: [string, RegExp][] = [
    ["export OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx", /sk-proj-abcdef/],
    ["curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abcdefghijk'", /eyJzdWIiOiIxIn0/],
    ["git clone https://ghp_0123456789abcdefghijABCDEFGHIJ012345@github.com/o/r", /ghp_0123456789/],
    ["token github_pat_11ABCDEFG0123456789_abcdefghijklmnop", /github_pat_11ABC/],
    ["aws AKIAIOSFODNN7EXAMPLE", /IOSFODNN7EXAMPLE/],
    ["-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----", /MIIEowIBAAKCAQEA/],
    ["psql postgres://admin:hunter2secret@db/x", /hunter2secret/],
    ["ANTHROPIC_API_KEY: sk-ant-api03-abcdefghijklmnopqrstu", /api03-abcdefghij/],
    ["slack xoxb-1234567890-abcdefghij", /1234567890-abcdefghij/],
  ];
  for (const [sample, secret] of samples) {
    it(`masks ${sample.split(/\s/)[0]} …`, () => {
      const masked = maskSecrets(sample);
      assert.doesNotMatch(masked, secret);
      assert.match(masked, /MASKED/);
    });
  }

  it("leaves ordinary commands alone", () => {
    for (const plain of ["npm test", "git commit -m 'fix token parsing'", "ls -la src/", "echo $HOME"]) assert.equal(maskSecrets(plain), plain);
  });
});

describe("the contradiction matcher", () => {
  const none = () => false;
  it("flags a plain claim of a file that is not there", () => {
    assert.equal(findContradictions("Saved the results to `out/results.json`.", [], [], none).length, 1);
  });
  it("stays quiet on hedges, questions, plans, URLs and files that exist", () => {
    const quiet = [
      "I did not create report.md because the folder is read-only.",
      "Should I write report.md?",
      "Next I will create report.md.",
      "I created an issue at https://github.com/o/r.",
      "Created version 1.2 of the plan.",
      "I wrote the summary in my answer below.",
      "I created scratch.txt for the check and removed it afterwards.",
    ];
    for (const text of quiet) assert.deepEqual(findContradictions(text, [], [], none), [], text);
    assert.deepEqual(findContradictions("Wrote report.md.", [], [], (p) => p === "report.md"), []);
  });
  it("tests: only when the last test-like command failed", () => {
    const failed = [{ callID: "a", command: "npm test", exitCode: 1, seq: 1 }];
    const fixed = [...failed, { callID: "b", command: "npm test", exitCode: 0, seq: 2 }];
    assert.equal(findContradictions("All tests pass.", [], failed, none).length, 1);
    assert.equal(findContradictions("All tests pass.", [], fixed, none).length, 0);
    assert.equal(findContradictions("All tests pass.", [], [], none).length, 0);
    assert.equal(findContradictions("The tests do not pass yet.", [], failed, none).length, 0);
    const shellTest = [{ callID: "c", command: "test -f out.txt", exitCode: 1, seq: 1 }];
    assert.equal(findContradictions("All tests pass.", [], shellTest, none).length, 0, "the shell's test is not a test run");
    for (const runner of ["pnpm run test", "npx vitest run", "go test ./...", "node --import tsx --test x.test.ts", "python -m pytest -q"]) {
      assert.equal(findContradictions("All tests pass.", [], [{ callID: "d", command: runner, exitCode: 1, seq: 1 }], none).length, 1, runner);
    }
  });
});

describe("the contradiction matcher on captured real histories", () => {
  it("raises no alarm on any answer of the fork fixtures (captured from a real OpenCode), even with every file missing", () => {
    for (const name of ["tool-outputs", "compacted"]) {
      const history = JSON.parse(readFileSync(new URL(`../fixtures/histories/${name}.json`, import.meta.url), "utf8")) as { messages: any[] };
      const answers = history.messages.filter((m) => m.info.role === "assistant").map((m) => m.parts.filter((p: any) => p.type === "text").map((p: any) => p.text).join("\n"));
      const commands = history.messages.flatMap((m) => m.parts).filter((p: any) => p.type === "tool" && p.tool === "bash")
        .map((p: any, i: number) => ({ callID: p.callID, command: p.state.input.command, exitCode: p.state.metadata?.exit, seq: i }));
      assert.ok(answers.length >= 5, `${name} has answers`);
      for (const text of answers) assert.deepEqual(findContradictions(text, [], commands, () => false), [], text.slice(0, 80));
    }
  });
});

describe("the contradiction matcher on answers written the way coding agents write them", () => {
  const npmTest = (exitCode: number) => [{ callID: "t", command: "npm test", exitCode, seq: 1 }];
  const cases: { text: string; existing?: string[]; commands?: ReturnType<typeof npmTest>; flags: string[] }[] = [
    { text: "I've created `docs/architecture.md` describing the module layout and updated `README.md` with a link to it.", existing: ["README.md"], flags: ["docs/architecture.md"] },
    { text: "## Summary\n\n- Added input validation to `src/api/users.ts`\n- Wrote unit tests in `test/users.test.ts`\n\nAll 42 tests pass (`npm test`).", existing: ["src/api/users.ts", "test/users.test.ts"], commands: npmTest(0), flags: [] },
    { text: "## Summary\n\n- Wrote unit tests in `test/users.test.ts`\n\nAll 42 tests pass (`npm test`).", existing: ["test/users.test.ts"], commands: npmTest(1), flags: ["tests"] },
    { text: "The report has been saved to report.md.", flags: ["report.md"] },
    { text: "I was unable to write to `/etc/hosts` because of permissions.", flags: [] },
    { text: "Next steps: create a migration file `db/002_add_index.sql` and run it.", flags: [] },
    { text: "Tests: 12 passed, 0 failed.", commands: npmTest(1), flags: ["tests"] },
    { text: "Tests are still failing; I could not get them to pass.", commands: npmTest(1), flags: [] },
    { text: "All tests pass except `auth.test.ts`, which was already failing before my change.", commands: npmTest(1), flags: [] },
    { text: "I created a new branch `feature/login` and committed the changes.", flags: [] },
    { text: "Created `config.yaml`, `schema.json` and `README.md`.", existing: ["config.yaml", "README.md"], flags: ["schema.json"] },
    { text: "I wrote a function `parseDate()` in utils.ts.", existing: ["utils.ts"], flags: [] },
    { text: "The tests pass.", flags: [] },
    { text: "Version 2.0.1 is out and the changelog lists every fix.", flags: [] },
  ];
  for (const c of cases) {
    it(`${c.flags.length ? `flags ${c.flags.join(", ")}` : "quiet"}: ${c.text.split("\n").at(-1)!.slice(0, 60)}`, () => {
      const found = findContradictions(c.text, [], c.commands ?? [], (p) => (c.existing ?? []).includes(p));
      const flags = found.map((f) => (f.kind === "tests-failed" ? "tests" : /says (\S+) was written/.exec(f.message)![1]!));
      assert.deepEqual(flags, c.flags);
    });
  }
});
