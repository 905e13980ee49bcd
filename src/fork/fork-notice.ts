/**
 * The first message a forked child receives: the preamble inside a marked block, then the task
 * prompt. The mark is how a child's model request is recognised later, even after a restart:
 * everything before the marked message is inherited context.
 */
const OPEN = "<forked-context-notice>";
const CLOSE = "</forked-context-notice>";

export function forkPromptText(preamble: string, taskPrompt: string): string {
  return `${OPEN}\n${preamble}\n${CLOSE}\n\n${taskPrompt}`;
}

/** The task prompt of a marked message's text, or undefined when the text is not marked. */
export function taskPromptOf(text: string): string | undefined {
  if (!text.startsWith(OPEN)) return undefined;
  const end = text.indexOf(CLOSE);
  return end < 0 ? undefined : text.slice(end + CLOSE.length).replace(/^\n\n/, "");
}
