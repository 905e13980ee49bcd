/** A failure the CLI explains in one message. Exit code 2 for misuse, 1 for everything else. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2,
  ) {
    super(message);
  }
}

export const usageError = (message: string) =>
  new CliError(`${message}\nRun \`opencode-errands --help\` for usage.`, 2);
