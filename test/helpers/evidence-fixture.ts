import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { coreFixture, PARENT } from "./core-fixture.ts";
import { MemoryEvidenceStore } from "../../src/evidence/memory-evidence-store.ts";
import { EvidenceService, type EvidenceConfig } from "../../src/evidence/evidence-service.ts";
import { buildTools } from "../../src/tools/build-tools.ts";
import { normalizeEvent } from "../../src/host/normalize-event.ts";
import { DEFAULT_OPTIONS, type Options } from "../../src/options/options.ts";

let callSeq = 0;

/** The core fixture with the evidence service plugged in, a temp project dir, and helpers to play a child's tool parts. */
export function evidenceFixture(overrides: Partial<Options & EvidenceConfig> = {}) {
  const projectDir = mkdtempSync(join(tmpdir(), "ocbt-evidence-"));
  const options = { ...DEFAULT_OPTIONS, ...overrides };
  const evidenceStore = new MemoryEvidenceStore();
  let evidence!: EvidenceService;
  const f = coreFixture(overrides, undefined, {
    hooks: (running) => (evidence = new EvidenceService(running, evidenceStore, projectDir, options)),
  });
  f.host.onEvent((event) => {
    f.manager.handleEvent(event);
    evidence.handleEvent(event);
  });
  const tools = buildTools({ manager: f.manager, clock: f.clock, options, onCrash: (m) => f.crashes.push(m), evidence });
  let messageSeq = 0;

  async function call(name: string, args: unknown, ask?: (input: unknown) => Promise<void>) {
    const context = { sessionID: PARENT, messageID: `msg_p${++messageSeq}`, agent: "build", abort: new AbortController().signal, ask, extra: { model: { id: "mock-model", providerID: "mock" } } };
    return String(await tools[name].execute(args as never, context as never));
  }

  async function launch(args: Record<string, unknown> = {}) {
    const out = await call("background_task", { description: "write a report", prompt: "p", agent: "general", ...args });
    const id = out.match(/task_id: (\S+)/)?.[1];
    if (!id) throw new Error(`launch failed: ${out}`);
    return id;
  }

  /** A tool call of the child, as the host sends it: running, then completed or error (through the real normaliser). */
  async function toolCall(sessionID: string, tool: string, input: Record<string, unknown>, end: { metadata?: Record<string, unknown>; error?: string; before?: () => void } = {}) {
    const base = { id: `prt_${++callSeq}`, messageID: "msg_child", sessionID, type: "tool", tool, callID: `call_${callSeq}` };
    const emit = (state: Record<string, unknown>) => {
      const event = normalizeEvent({ type: "message.part.updated", properties: { sessionID, part: { ...base, state } } });
      if (event) f.host.emit(event);
    };
    emit({ status: "pending", input: {}, raw: "" });
    emit({ status: "running", input, time: { start: 1000 } });
    end.before?.();
    if (end.error) emit({ status: "error", input, error: end.error, time: { start: 1000, end: 1250 } });
    else emit({ status: "completed", input, output: "ok", title: "", metadata: end.metadata ?? {}, time: { start: 1000, end: 1250 } });
    await f.flush();
  }

  return { ...f, call, launch, toolCall, evidence, evidenceStore, projectDir, cleanup: () => rmSync(projectDir, { recursive: true, force: true }) };
}
