import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bashPatterns, judgeCommand } from "../../src/approval/bash-patterns.ts";
import { shellAmong, commandShell, type CommandShell } from "../../src/approval/command-shell.ts";
import { observe, uncovered } from "../helpers/shell-probe.ts";
import { startedAutomations, PARENT, MODEL } from "../helpers/automation-fixture.ts";
import { automationTools } from "../../src/tools/build-tools.ts";

/**
 * Without bash the plugin runs commands with /bin/sh (dash on Debian) but judges them with the bash grammar.
 * Where the two read a command differently, the grammar must not see less than sh runs: each
 * input here made /bin/sh create a file while the grammar saw no command, or only an allowed one.
 */
describe("bash-only syntax that /bin/sh reads differently is refused (issue 22 item 2)", () => {
  const dir = mkdtempSync(join(tmpdir(), "sh-gap-"));
  const cases: [string, string][] = [
    ["[[ -n a || touch FILE ]]", "[[ … ]] is not POSIX sh: sh runs `touch` inside it, the grammar sees a test"],
    ["(( touch FILE ))", "(( … )) is nested subshells to sh, arithmetic to the grammar"],
    ["git status &> /dev/null touch FILE", "&> is `&` then `>` to sh: `touch` runs; the grammar sees one git command"],
    ["git status &>> /dev/null touch FILE", "the same with &>>"],
    ["git log `git \\`touch FILE\\``", "nested backticks: the grammar sees `git \\`touch …\\`` (allowed by \"git *\"), sh runs touch"],
    ["git status ${x:-`touch FILE`}", "a backtick inside ${…} is left unparsed by the grammar"],
    ["git log <<EOF\n`touch FILE`\nEOF", "a backtick in an unquoted here-document is left unparsed by the grammar"],
  ];
  for (const [template, why] of cases) {
    it(`${template}: ${why}`, async () => {
      const file = join(dir, `f${cases.findIndex(([t]) => t === template)}`);
      const command = template.replace("FILE", file);
      spawnSync("/bin/sh", ["-c", command], { cwd: dir, stdio: "ignore" });
      const shRunsIt = existsSync(file);
      const judged = await bashPatterns(command, "sh");
      // Either the grammar sees the touch, or the command is refused (undefined); never a silent pass.
      const seen = judged?.patterns.some((p) => p.startsWith("touch ")) ?? true;
      assert.ok(!shRunsIt || seen, `/bin/sh ran touch but the patterns were ${JSON.stringify(judged)}`);
      assert.equal(judged, undefined);
    });
  }

  it("POSIX forms of the same still pass and are judged part by part", async () => {
    for (const shell of ["sh", "bash"] as const) {
      assert.deepEqual(await bashPatterns("[ -n a ] || touch x", shell), { patterns: ["touch x"], always: ["touch *"] });
      assert.deepEqual(await bashPatterns("git status > /dev/null 2>&1; echo $((1 + 2))", shell), { patterns: ["git status > /dev/null 2>&1", "echo $((1 + 2))"], always: ["git status *", "echo *"] });
    }
    for (const literal of ["cat <<'EOF'\n$(x) `y`\nEOF", "echo '$(x) `y`'", 'echo "\\$(x) \\`y\\`"']) {
      assert.deepEqual((await bashPatterns(literal, "sh"))?.patterns.length, 1, literal);
    }
  });
});

/** The "always" prefixes are OpenCode 1.18.33's (its BashArity table, read from the binary): never wider. */
describe("always prefixes as OpenCode 1.18.33 derives them", () => {
  const cases: [string, string][] = [
    ["docker image rm foo", "docker image rm *"],
    ["kubectl rollout restart deploy/x", "kubectl rollout restart *"],
    ["systemctl stop nginx", "systemctl stop *"],
    ["az vm delete --name x", "az vm delete *"],
    ["brew install jq", "brew install *"],
    ["npm view left-pad version", "npm view left-pad *"],
    ["terraform workspace delete prod", "terraform workspace delete *"],
    ["vault kv put secret/x a=b", "vault kv put *"],
    ["git push origin main", "git push *"],
    ["touch a b", "touch *"],
    ["unknowncmd sub arg", "unknowncmd *"],
  ];
  for (const [command, always] of cases) {
    it(`${command} -> ${always}`, async () => {
      assert.deepEqual((await bashPatterns(command))?.always, [always]);
    });
  }
});

describe("'always' for background_automation is never a wildcard the model wrote", () => {
  it("a title with * or ? is not offered as an always rule (OpenCode's match has no escape: \"*\" would approve every later automation)", async () => {
    const f = startedAutomations();
    const tools = automationTools(f.automations, () => {});
    const asked: { permission: string; always: string[] }[] = [];
    const call = (args: unknown) => tools.task_create!.execute(args as never, {
      sessionID: PARENT, messageID: "msg_1", agent: "build", abort: new AbortController().signal,
      extra: { model: { id: MODEL.modelID, providerID: MODEL.providerID } },
      ask: async (input: { permission: string; always: string[] }) => { asked.push(input); },
    } as never);
    await call({ title: "*", prompt: "look at CI" });
    await call({ title: "nightly ?", prompt: "look at CI" });
    const always = asked.filter((a) => a.permission === "background_automation").flatMap((a) => a.always);
    assert.deepEqual(always.filter((rule) => /[*?]/.test(rule)), []);
  });
});

/**
 * Every construct of the POSIX shell grammar, run in the real shell with a PATH of recording
 * stubs (issue 33): what ran (a stub, a stub with $MARK in its environment, a file written) is
 * covered by the asked patterns, or the command is refused. `refused` marks the cases that must
 * be refused under that shell; the others must be judged, so the table cannot pass by refusing all.
 */
const CONSTRUCTS: [construct: string, command: string, refused?: "bash" | "sh" | "both"][] = [
  ["simple commands", "git status; touch pwned"],
  ["pipeline and !", "git log | touch pwned; ! touch b"],
  ["and/or lists", "git status && touch pwned || touch b"],
  ["& and newline lists", "touch pwned & git status\ntouch b"],
  ["subshell", "(touch pwned)"],
  ["brace group", "{ touch pwned; }"],
  ["if/elif/else", "if git status; then touch pwned; elif touch b; then :; else touch c; fi"],
  ["while", "while touch pwned; do break; done"],
  ["until", "until touch pwned; do :; done"],
  ["for", "for f in $(touch pwned) a; do touch \"$f\"; done"],
  ["case", "case $(touch pwned) in *) touch b;; esac"],
  ["function definition", "git() { touch pwned; }; git status"],
  ["prefix assignment", "MARK=1 git status"],
  ["bare assignment and export", "MARK=1; export MARK; git status"],
  ["export with assignments", "export GIT_CONFIG_COUNT=1 MARK=1; git status"],
  ["readonly", "readonly MARK=1; export MARK; git status"],
  ["assignment from a substitution", "MARK=$(touch pwned)"],
  ["unset", "unset MARK; git status"],
  ["> on a command", "git status > victim.txt"],
  ["bare >", "git status; > victim.txt"],
  [">>", "git log >> new.txt"],
  [">|", "git log >| victim.txt"],
  ["fd writes", "git log 2> err.txt 3> three.txt 2>&1 >&2 > /dev/null"],
  ["< and <&", "git log < victim.txt 0<&0"],
  ["<> (the grammar cannot parse it)", "git log <> rw.txt", "both"],
  [">& to a file (bash writes it, dash refuses to run)", "git log >& out.txt"],
  ["redirected compound", "{ git status; } > out.txt"],
  ["exec with a redirection", "exec 3> fd.txt; git status"],
  ["here-document, unquoted", "cat <<EOF\n$(touch pwned) ${x:-$(touch b)}\nEOF"],
  ["backticks in an unquoted here-document (the grammar leaves them unparsed)", "cat <<EOF\n`touch b`\nEOF", "both"],
  ["here-document, quoted", "cat <<'EOF'\n$(touch pwned) `touch b`\nEOF"],
  ["here-document <<-", "cat <<-EOF\n$(touch pwned)\nEOF"],
  ["here-document <<- with tabs (the grammar leaves it unparsed)", "cat <<-EOF\n\t$(touch pwned)\n\tEOF", "both"],
  ["command substitution", "git log $(touch pwned)"],
  ["backticks", "git log `touch pwned`"],
  ["arithmetic expansion", "git log $((1 + 2)); touch pwned"],
  ["arithmetic on a variable's value", "x='a[$(touch pwned)]'; git log $((x))", "bash"],
  ["parameter expansion with words", "git log ${x:-$(touch pwned)} ${y:=$(touch b)} ${z-$(touch c)} ${#MARK}"],
  ["parameter expansion that assigns", "${MARK:=1}; export MARK; git status"],
  ["a pattern removal with a substitution (the grammar leaves it unparsed)", "git log ${z#$(touch c)}", "both"],
  ["continuation, unquoted", "git status\\\n#; touch pwned"],
  ["continuation in a word", "tou\\\nch pwned"],
  ["continuation, double quotes", "git log \"$\\\n(touch pwned)\""],
  ["continuation, single quotes", "git log '$\\\n(touch pwned)'"],
  ["continuation, unquoted here-document", "cat <<EOF\n$\\\n(touch pwned)\nEOF", "sh"],
  ["continuation, quoted here-document", "cat <<'EOF'\n$\\\n(touch pwned)\nEOF"],
  ["continuation joins a delimiter", "cat <<EOF\nx\nEO\\\nF\ntouch pwned", "sh"],
  ["continuation, command substitution", "git log $(tou\\\nch pwned)"],
  ["continuation, backticks", "git log `tou\\\nch pwned`"],
  ["continuation splitting an operator", "git status &\\\n& touch pwned"],
  ["continuation in ${…}", "git log ${x:-$\\\n(touch pwned)}"],
  ["continuation in an assignment and a redirection", "MA\\\nRK=1 git status >\\\n victim.txt"],
  ["continuation after <<", "cat <<\\\nEOF\n$(touch pwned)\nEOF"],
  ["escaped backslash before a newline", "git log a\\\\\ntouch pwned"],
  ["continuation in a comment", "git status # x\\\ntouch pwned"],
  ["comment", "git status # ; touch pwned"],
  ["eval", "eval 'touch pwned'"],
  ["alias (dash expands it, bash -c does not)", "alias git='touch pwned'\ngit status"],
  ["trap", "trap 'touch pwned' EXIT; git status"],
  [". a written file", "echo touch pwned > s.sh; . ./s.sh"],
  ["exec", "exec touch pwned"],
];

/** bash-only syntax, judged when bash runs the commands; what makes bash evaluate a variable's value as code is refused. */
const BASH_CONSTRUCTS: [construct: string, command: string, refused?: "bash"][] = [
  ["&> writes a file", "git status &> out.txt; git log &>> log.txt"],
  ["|&", "git log |& touch pwned"],
  ["<<< with a substitution", "cat <<< $(touch pwned)"],
  ["process substitution", "tee >(touch pwned) <(touch b)"],
  ["function keyword", "function git { touch pwned; }; git status"],
  ["array assignment", "a=(1 $(touch pwned)); git log"],
  ["$'…' and $\"…\"", "git log $'a\\nb' $\"c\"; touch pwned"],
  ["continuation inside $'…'", "git log $'a\\\n'; touch pwned", "bash"],
  ["[[ … ]] with a value evaluated", "x='a[$(touch pwned)]'; [[ $x -eq 1 ]]", "bash"],
  ["(( … ))", "x='a[$(touch pwned)]'; (( x ))", "bash"],
  ["let", "x='a[$(touch pwned)]'; let y=x", "bash"],
  ["C-style for", "x='a[$(touch pwned)]'; for ((i=x; i<0; i++)); do :; done", "bash"],
  ["${!x}", "x='a[$(touch pwned)]'; git log ${!x}", "bash"],
  ["${s:offset}", "x='a[$(touch pwned)]'; s=abc; git log ${s:x}", "bash"],
  ["a subscript", "x='a[$(touch pwned)]'; b=(1 2); git log ${b[x]}", "bash"],
  ["test -v", "x='a[$(touch pwned)]'; [ -v \"$x\" ]", "bash"],
  ["printf -v", "x='a[$(touch pwned)]'; printf -v \"$x\" 1", "bash"],
  ["read into a computed name", "x='a[$(touch pwned)]'; read \"$x\" <<< 1", "bash"],
  ["declare -i", "x='a[$(touch pwned)]'; declare -i y; y=x", "bash"],
  ["${x@P} (prompt expansion runs $(…) in the value)", "x='$(touch pwned)'; git log \"${x@P}\"", "bash"],
  ["$[ … ]", "x='a[$(touch pwned)]'; git log $[x]", "bash"],
  ["literal arithmetic, subscript and offset still pass", "b=(1 2); s=abc; git log $((1 + 2)) ${b[1]} ${s:1:2} ${s: -1}; touch pwned"],
];

const bash = commandShell();
if (bash.kind === "bash") {
  describe(`bash-only syntax under ${bash.file}: judged as bash reads it, or refused (issue 33)`, () => {
    for (const [construct, command, refused] of BASH_CONSTRUCTS) {
      it(`${construct}: ${JSON.stringify(command)}`, async () => {
        const judged = await judgeCommand(command, "bash");
        const ran = observe(command, bash);
        assert.deepEqual(uncovered(ran, judged), [], `patterns ${JSON.stringify(judged)}`);
        assert.equal("refused" in judged, refused === "bash", JSON.stringify(judged));
        if (refused) assert.ok(ran.ran.some((line) => line.startsWith("touch pwned")), "the refused case does run code in bash (the probe shows why it is refused)");
      });
    }
  });
}

for (const shell of [commandShell(), shellAmong([])].filter((s, i, all) => all.findIndex((t) => t.kind === s.kind) === i)) {
  describe(`under ${shell.kind} (${shell.file}), what runs is asked or the command is refused (issue 33)`, () => {
    for (const [construct, command, refused] of CONSTRUCTS) {
      it(`${construct}: ${JSON.stringify(command)}`, async () => {
        const judged = await judgeCommand(command, shell.kind);
        const ran = observe(command, shell);
        assert.deepEqual(uncovered(ran, judged), [], `patterns ${JSON.stringify(judged)}`);
        const mustRefuse = refused === "both" || refused === shell.kind;
        assert.equal("refused" in judged, mustRefuse, JSON.stringify(judged));
      });
    }
  });
}

describe("the probe itself sees what runs (it can fail)", () => {
  const shell: CommandShell = commandShell();
  it("a stub run, a $MARK and a written file are each reported when no pattern covers them", () => {
    const ran = observe("MARK=1 git status; touch pwned > out.txt", shell);
    assert.deepEqual(ran.ran, ["git status MARK=1", "touch pwned"]);
    assert.deepEqual(ran.written, ["out.txt"]);
    assert.deepEqual(uncovered(ran, { patterns: ["git status"], always: ["git status *"] }), ["ran with MARK set: `git status MARK=1`", "ran `touch pwned`", "wrote out.txt"]);
  });
});
