/** Everything the CLI touches outside itself, so tests can run it in-process. */
export type CliIo = {
  stdout(text: string): void;
  stderr(text: string): void;
  env: Record<string, string | undefined>;
  now(): number;
  /** Waits (proposals approve|reject polls for the outcome); setTimeout when absent. */
  sleep?(ms: number): Promise<void>;
  /** Asks the user and returns the line typed; present only when stdin is a terminal (proposals approve). */
  ask?(question: string): Promise<string>;
  /** A line typed with the echo off (webhooks set-secret); present only when stdin is a terminal. */
  readSecret?(question: string): Promise<string>;
  /** All of stdin; present only when stdin is not a terminal (a pipe or a file). */
  readStdin?(): Promise<string>;
};

const readSecret = async (question: string) => (await import("./read-secret.ts")).readHiddenLine(question);
const readStdin = async () => (await import("./read-secret.ts")).readAllStdin();

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The question goes to stderr, so stdout stays the command's output (--json). */
async function ask(question: string): Promise<string> {
  const { createInterface } = await import("node:readline/promises");
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return await rl.question(question);
  } finally {
    rl.close();
  }
}

export const processIo: CliIo = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  env: process.env,
  now: () => Date.now(),
  sleep,
  ...(process.stdin.isTTY ? { ask, readSecret } : { readStdin }),
};
