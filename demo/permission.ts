/**
 * OpenCode's permission prompt, answered as the user would answer it in the TUI: the prompt is
 * the server's `permission.asked` event, the answer goes to the server's permission reply route.
 */
import type { Stack } from "../test/harness/plugin-stack.ts";

export type PermissionAsked = { id: string; sessionID: string; permission: string; patterns: string[]; metadata?: Record<string, unknown> };

const ASK_WAIT_MS = 30_000;

/** The first permission prompt of a session among the events from index `from` on. */
export async function waitForPermission(stack: Stack, sessionID: string, from: number): Promise<PermissionAsked> {
  const event = await stack.events.waitForEvent(
    (e) => e.type === "permission.asked" && (e.properties as { sessionID?: string }).sessionID === sessionID,
    ASK_WAIT_MS,
    from,
  );
  return event.properties as unknown as PermissionAsked;
}

export async function answerPermission(stack: Stack, id: string, reply: "once" | "always" | "reject"): Promise<void> {
  const directory = encodeURIComponent(stack.server.projectDir);
  const res = await fetch(`${stack.server.url}/permission/${id}/reply?directory=${directory}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ reply }),
  });
  if (!res.ok) throw new Error(`answering the permission prompt failed: HTTP ${res.status} ${await res.text()}`);
}
