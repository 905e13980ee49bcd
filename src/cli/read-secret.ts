import { Writable } from "node:stream";

/** A line typed on the terminal with its echo off; the question and the final newline go to stderr. */
export async function readHiddenLine(question: string): Promise<string> {
  const { createInterface } = await import("node:readline");
  let muted = false;
  const output = new Writable({
    write(chunk, _encoding, done) {
      if (!muted) process.stderr.write(chunk);
      done();
    },
  });
  const rl = createInterface({ input: process.stdin, output, terminal: true });
  return new Promise((resolve) => {
    rl.question(question, (answer) => {
      rl.close();
      process.stderr.write("\n");
      resolve(answer);
    });
    muted = true;
  });
}

/** All of stdin (a pipe or a file), at most 64 KB. */
export async function readAllStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    size += chunk.length;
    if (size > 65_536) break;
  }
  return Buffer.concat(chunks).toString("utf8");
}
