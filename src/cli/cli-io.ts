/** Everything the CLI touches outside itself, so tests can run it in-process. */
export type CliIo = {
  stdout(text: string): void;
  stderr(text: string): void;
  env: Record<string, string | undefined>;
  now(): number;
  /** Waits (proposals approve|reject polls for the outcome); setTimeout when absent. */
  sleep?(ms: number): Promise<void>;
};

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export const processIo: CliIo = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  env: process.env,
  now: () => Date.now(),
  sleep,
};
