import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseWorkers, readWorkerPassword, type WorkerConfig } from "../../src/workers/worker-config.ts";

const BOX = { name: "box", url: "http://10.0.0.5:4096", username: "opencode", passwordEnv: "BOX_OPENCODE_PASSWORD", directory: "/srv/checkouts/myrepo", capacity: 8 };

function problemsOf(raw: unknown): string[] {
  const { problems } = parseWorkers(raw);
  assert.ok(problems.length > 0, `no problem for ${JSON.stringify(raw)}`);
  return problems;
}

const one = (fields: Record<string, unknown>) => problemsOf([{ ...BOX, ...fields }]).join("\n");

describe("the workers option", () => {
  it("takes the issue's exact shape, and nothing is no workers", () => {
    assert.deepEqual(parseWorkers([BOX]), { workers: [BOX], problems: [] });
    assert.deepEqual(parseWorkers(undefined), { workers: [], problems: [] });
    assert.deepEqual(parseWorkers([]), { workers: [], problems: [] });
  });

  it("defaults: user opencode, capacity 4, no password variable; https and a trailing slash", () => {
    const { workers, problems } = parseWorkers([{ name: "b-2_x", url: "https://box.example.com:8443/", directory: "/srv/repo" }]);
    assert.deepEqual(problems, []);
    assert.deepEqual(workers, [{ name: "b-2_x", url: "https://box.example.com:8443", username: "opencode", directory: "/srv/repo", capacity: 4 }]);
  });

  it("refuses anything but an array of objects", () => {
    assert.match(problemsOf({ box: BOX })[0], /"workers" must be an array of workers, e\.g\. \[\{ "name": "box".*got an object/);
    assert.match(problemsOf(["http://box:4096"])[0], /"workers\[0\]" must be an object like \{ "name": "box".*got a string/);
    assert.match(problemsOf(Array.from({ length: 51 }, (_, i) => ({ ...BOX, name: `w${i}` })))[0], /at most 50 workers, got 51/);
  });

  it("names: letters, digits, - and _, unique, and never local or auto", () => {
    assert.match(one({ name: "my box" }), /"workers\[0\]\.name" must be 1-40 letters, digits, "-" or "_", e\.g\. "box", got "my box"/);
    assert.match(one({ name: undefined }), /"workers\[0\]\.name" must be .* got nothing/);
    assert.match(one({ name: "x".repeat(41) }), /"workers\[0\]\.name" must be 1-40/);
    assert.match(one({ name: "local" }), /must not be "local": "local" and "auto" are reserved/);
    assert.match(one({ name: "Auto" }), /must not be "Auto": "local" and "auto" are reserved/);
    const twice = problemsOf([BOX, { ...BOX, url: "http://10.0.0.6:4096" }]);
    assert.deepEqual(twice, [`"workers[1].name" "box" is used twice: give each worker its own name`]);
    assert.equal(parseWorkers([BOX, { ...BOX, url: "http://10.0.0.6:4096" }]).workers.length, 1);
  });

  it("url: a full http(s) URL without credentials, query or fragment", () => {
    assert.match(one({ url: "10.0.0.5:4096" }), /"workers\[0\] \("box"\)\.url" (is not a valid URL|must start with http)/);
    assert.match(one({ url: "ftp://10.0.0.5" }), /\.url" must start with https:\/\/ or http:\/\/, got a URL with scheme ftp:/);
    assert.match(one({ url: 4096 }), /\.url" must be the worker's http\(s\) URL, e\.g\. "http:\/\/10\.0\.0\.5:4096", got a number/);
    const creds = one({ url: "http://opencode:hunter2secret@10.0.0.5:4096" });
    assert.match(creds, /\.url" on host 10\.0\.0\.5:4096 must not carry a user name or password: use "username" and "passwordEnv"/);
    assert.doesNotMatch(creds, /hunter2secret/);
    assert.match(one({ url: "http://10.0.0.5:4096/?directory=/x" }), /must not have a query or fragment: give the server's base URL, e\.g\. "http:\/\/10\.0\.0\.5:4096"/);
  });

  it("a password in the config is refused, and the message says to use passwordEnv without quoting it", () => {
    const message = one({ password: "hunter2secret" });
    assert.match(message, /"workers\[0\] \("box"\)" must not hold a password: remove "password" and name the environment variable that holds it with "passwordEnv"/);
    assert.doesNotMatch(message, /hunter2secret/);
  });

  it("passwordEnv must name a variable; username must be usable in basic auth", () => {
    assert.match(one({ passwordEnv: "hunter2 secret" }), /\.passwordEnv" must be the name of an environment variable, e\.g\. "BOX_OPENCODE_PASSWORD".*got a string/);
    assert.doesNotMatch(one({ passwordEnv: "hunter2 secret" }), /hunter2/);
    assert.match(one({ passwordEnv: "" }), /\.passwordEnv" must be the name of an environment variable/);
    assert.match(one({ username: "a:b" }), /\.username" must be a user name without ":" \(OpenCode's default is "opencode"\)/);
    assert.match(one({ username: "" }), /\.username" must be a user name/);
  });

  it("directory: required and absolute (POSIX or Windows)", () => {
    assert.match(one({ directory: undefined }), /\.directory" must be the absolute path of the project's checkout on the worker, e\.g\. "\/srv\/checkouts\/myrepo", got nothing/);
    assert.match(one({ directory: "checkouts/myrepo" }), /\.directory" must be the absolute path .* got "checkouts\/myrepo"/);
    assert.deepEqual(parseWorkers([{ ...BOX, directory: "C:\\src\\myrepo" }]).problems, []);
  });

  it("capacity: a whole number from 1 to 500", () => {
    for (const capacity of [0, 501, 2.5, "8", -1]) {
      assert.match(one({ capacity }), /\.capacity" must be a whole number of children from 1 to 500 \(default 4\)/, String(capacity));
    }
    assert.equal(parseWorkers([{ ...BOX, capacity: 1 }]).workers[0].capacity, 1);
    assert.equal(parseWorkers([{ ...BOX, capacity: 500 }]).workers[0].capacity, 500);
  });

  it("unknown keys are named with the known ones; a bad worker is left out, the others kept", () => {
    const { workers, problems } = parseWorkers([{ ...BOX, capcity: 3 }, { ...BOX, name: "other" }]);
    assert.deepEqual(problems, [`"workers[0] ("box")" has an unknown key "capcity" (known: name, url, username, passwordEnv, directory, capacity)`]);
    assert.deepEqual(workers.map((w) => w.name), ["other"]);
  });
});

describe("the worker's password", () => {
  const worker: WorkerConfig = { ...BOX };

  it("is read from the named variable", () => {
    assert.deepEqual(readWorkerPassword(worker, { BOX_OPENCODE_PASSWORD: "pw" }), { password: "pw" });
  });

  it("an unset or empty variable is that worker's own error, naming the variable and the fix", () => {
    for (const env of [{}, { BOX_OPENCODE_PASSWORD: "" }]) {
      const { password, error } = readWorkerPassword(worker, env);
      assert.equal(password, undefined);
      assert.equal(error, `worker "box": the environment variable BOX_OPENCODE_PASSWORD is not set; set it to that server's OPENCODE_SERVER_PASSWORD before starting OpenCode`);
    }
  });

  it("no passwordEnv: no password and no error", () => {
    assert.deepEqual(readWorkerPassword({ ...worker, passwordEnv: undefined }, {}), {});
  });
});
