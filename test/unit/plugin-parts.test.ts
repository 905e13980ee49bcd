import { test } from "node:test";
import assert from "node:assert/strict";
import { Parts, partFrom, type Part } from "../../src/plugin/parts.ts";

const recorder = () => {
  const events: string[] = [];
  const part = (name: string, start: () => void | Promise<void> = () => {}): Part => ({
    name, start: async () => { events.push(`start ${name}`); await start(); }, stop: () => events.push(`stop ${name}`),
  });
  return { events, part };
};

test("parts start one after another, a failing one is logged and the next still starts, and they stop in reverse", async () => {
  const { events, part } = recorder();
  const crashes: string[] = [];
  let release!: () => void;
  const slow = new Promise<void>((resolve) => (release = resolve));
  const parts = new Parts([part("core", () => slow), part("workers", () => { throw new Error("no route"); }), part("inbox")], (m) => crashes.push(m));
  const started = parts.start();
  assert.deepEqual(events, ["start core"], "the next part waits for the core's start");
  release();
  await started;
  assert.deepEqual(events, ["start core", "start workers", "start inbox"]);
  assert.deepEqual(crashes, ["Starting workers failed"]);
  parts.stop();
  assert.deepEqual(events.slice(3), ["stop inbox", "stop workers", "stop core"]);
});

test("a part not started when the plugin is disposed is never started; one whose start hands back its stop is stopped by it", async () => {
  const { events, part } = recorder();
  let release!: () => void;
  const slow = new Promise<void>((resolve) => (release = resolve));
  const parts = new Parts([
    partFrom("retention", () => { events.push("start retention"); return () => events.push("stop retention"); }),
    part("core", () => slow),
    part("inbox"),
  ], () => {});
  const started = parts.start();
  await new Promise(setImmediate); // the core's start is under way
  parts.stop();
  release();
  await started;
  assert.deepEqual(events, ["start retention", "start core", "stop core", "stop retention"]);
});
