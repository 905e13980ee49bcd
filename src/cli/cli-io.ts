/** Everything the CLI touches outside itself, so tests can run it in-process. */
export type CliIo = {
  stdout(text: string): void;
  stderr(text: string): void;
  env: Record<string, string | undefined>;
  now(): number;
};

export const processIo: CliIo = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  env: process.env,
  now: () => Date.now(),
};
