import { FakeClock, flush } from "./fake-clock.ts";
import { FakeHost } from "./fake-host.ts";
import { MemoryTaskStore } from "../../src/core/memory-task-store.ts";
import { TaskManager, type ManagerParts } from "../../src/core/task-manager.ts";
import { buildTools } from "../../src/tools/build-tools.ts";
import { DEFAULT_OPTIONS, type Options } from "../../src/options/options.ts";
import type { TaskStore } from "../../src/core/task-store.ts";

export const PARENT = "ses_parent0001";
export const MODEL = { providerID: "mock", modelID: "mock-model" };

/** A task manager on a fake host and a fake clock, with its tools, ready to drive. */
export function coreFixture(overrides: Partial<Options> = {}, store: TaskStore = new MemoryTaskStore(), parts: ManagerParts = {}) {
  const clock = new FakeClock();
  const host = new FakeHost(clock);
  host.addSession(PARENT, "busy");
  const options = { ...DEFAULT_OPTIONS, ...overrides };
  const crashes: string[] = [];
  const manager = new TaskManager(host, store, clock, options, parts);
  host.onEvent((event) => manager.handleEvent(event));
  const tools = buildTools({ manager, clock, options, onCrash: (m) => crashes.push(m) });
  let messageSeq = 0;
  const abort = new AbortController();

  /** Calls a tool as the parent's model would, from message `messageID`. */
  async function call(name: string, args: unknown, ctx: { sessionID?: string; messageID?: string; abort?: AbortSignal } = {}) {
    const context = {
      sessionID: ctx.sessionID ?? PARENT,
      messageID: ctx.messageID ?? `msg_parent${++messageSeq}`,
      agent: "build",
      abort: ctx.abort ?? abort.signal,
      extra: { model: { id: MODEL.modelID, providerID: MODEL.providerID } },
    };
    return String(await tools[name].execute(args as never, context as never));
  }

  async function launch(args: Record<string, unknown> = {}, ctx: { sessionID?: string; messageID?: string } = {}) {
    const out = await call("background_task", { description: "look around", prompt: "find things", agent: "general", ...args }, ctx);
    const id = out.match(/task_id: (\S+)/)?.[1];
    if (!id) throw new Error(`launch failed: ${out}`);
    return id;
  }

  return { clock, host, manager, store, tools, crashes, call, launch, flush };
}
