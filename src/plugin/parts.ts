/** A part of the plugin that runs: started once everything is built, stopped when OpenCode disposes the plugin. */
export type Part = {
  /** What the log calls it when it fails. */
  name: string;
  start(): void | Promise<void>;
  stop?(): void;
};

type OnCrash = (message: string, error: unknown) => void;

/**
 * The plugin's running parts, in start order. Each start is awaited before the next (the core
 * recovers before the workers reconnect, the automation layer starts after the core); a part that
 * fails is logged and the next still starts. Stop runs in reverse order; a part not started yet
 * when the plugin is disposed is never started.
 */
export class Parts {
  private stopped = false;
  private started: Part[] = [];

  constructor(private readonly parts: Part[], private readonly onCrash: OnCrash) {}

  async start(): Promise<void> {
    for (const part of this.parts) {
      if (this.stopped) return;
      this.started.push(part);
      try {
        await part.start();
      } catch (error) {
        this.onCrash(`Starting ${part.name} failed`, error);
      }
    }
  }

  stop(): void {
    this.stopped = true;
    for (const part of [...this.started].reverse()) {
      try {
        part.stop?.();
      } catch (error) {
        this.onCrash(`Stopping ${part.name} failed`, error);
      }
    }
    this.started = [];
  }
}

/** A part whose start hands back its stop (a timer, a server). */
export function partFrom(name: string, start: () => () => void): Part {
  let stop: (() => void) | undefined;
  return {
    name,
    start: () => {
      stop = start();
    },
    stop: () => stop?.(),
  };
}
