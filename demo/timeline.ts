/**
 * The demo's output: one line per step, each with the time since the demo started ("+1.23s").
 * Colour only on a terminal (and never with NO_COLOR), so piped output reads the same.
 */
const useColour = Boolean(process.stdout.isTTY) && !process.env.NO_COLOR;

const paint = (code: number) => (text: string) => (useColour ? `\x1b[${code}m${text}\x1b[0m` : text);
export const dim = paint(2);
export const bold = paint(1);
export const green = paint(32);
export const yellow = paint(33);
export const cyan = paint(36);
export const red = paint(31);

const STAMP_WIDTH = 8;

export class Timeline {
  private readonly startedAt = Date.now();

  /** Seconds since the start, as "+1.23s". */
  stamp(): string {
    return `+${((Date.now() - this.startedAt) / 1000).toFixed(2)}s`;
  }

  /** A step: the stamp, then the text; extra lines of the text are indented under it. */
  step(text: string): void {
    const [first, ...rest] = text.split("\n");
    console.log(`${dim(this.stamp().padStart(STAMP_WIDTH))}  ${first}`);
    for (const line of rest) this.detail(line);
  }

  /** A line under the previous step, without a stamp. */
  detail(text: string): void {
    console.log(`${" ".repeat(STAMP_WIDTH)}    ${text}`);
  }

  /** A plain line (headings, the summary). */
  plain(text = ""): void {
    console.log(text);
  }

  elapsedMs(): number {
    return Date.now() - this.startedAt;
  }
}

/** Text cut to one line of at most `max` characters. */
export function oneLine(text: string, max = 80): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}
