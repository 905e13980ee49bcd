import { createHash } from "node:crypto";
import { execFile } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { isAbsolute, join, resolve } from "node:path";
import type { FileCheck, FileEvidence, FileReader } from "./evidence-types.ts";

const HASH_LIMIT_BYTES = 64 * 1024 * 1024;
/** Files up to this size are read synchronously (faster than a thread-pool round trip each), a batch at a time. */
const SMALL_FILE_BYTES = 256 * 1024;
const BATCH = 50;

export function absolutePath(projectDir: string, path: string): string {
  return isAbsolute(path) ? path : join(projectDir, path);
}

type Snapshot = { exists: boolean; sha256?: string; size?: number; gitBlob?: string };

/** A file's state for a before/after comparison: exists, and its sha256 (and git blob id) when it is not huge. */
export async function snapshotFile(path: string, withGitBlob = false): Promise<Snapshot> {
  const small = smallFileSnapshot(path, withGitBlob);
  if (small) return small;
  const info = await stat(path).catch(() => undefined);
  if (!info?.isFile()) return { exists: false };
  if (info.size > HASH_LIMIT_BYTES) return { exists: true, size: info.size };
  const bytes = await readFile(path).catch(() => undefined);
  return bytes ? hashed(bytes, withGitBlob) : { exists: false };
}

/** Missing or small files, read at once; undefined for a large one (read asynchronously instead). */
function smallFileSnapshot(path: string, withGitBlob: boolean): Snapshot | undefined {
  try {
    const info = statSync(path, { throwIfNoEntry: false });
    if (!info?.isFile()) return { exists: false };
    if (info.size > SMALL_FILE_BYTES) return undefined;
    return hashed(readFileSync(path), withGitBlob);
  } catch {
    return undefined; // unreadable now: the asynchronous path says what it can
  }
}

/** A file read through a worker's API: what its content hashes to (no git index there). */
export async function readSnapshot(read: FileReader, path: string): Promise<Snapshot> {
  const content = await read(path).catch(() => undefined);
  return content === undefined ? { exists: false } : hashed(Buffer.from(content), false);
}

function hashed(bytes: Buffer, withGitBlob: boolean): Snapshot {
  const snapshot: Snapshot = { exists: true, size: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") };
  if (withGitBlob) snapshot.gitBlob = createHash("sha1").update(`blob ${bytes.length}\0`).update(bytes).digest("hex");
  return snapshot;
}

/**
 * Checks each file on disk after the run: exists, size, sha256, and whether it changed against the
 * copy seen just before the run's first write, else against git's index (when the project is a
 * repository), else it cannot say "unchanged". Returns the files with `check` set.
 */
export async function verifyFiles(projectDir: string, files: FileEvidence[], read?: FileReader): Promise<FileEvidence[]> {
  if (read) {
    const snapshots = await Promise.all(files.map((f) => readSnapshot(read, f.path)));
    return files.map((file, i) => verifyOne(projectDir, file, snapshots[i]!, undefined));
  }
  const needIndex = files.filter((f) => !f.before).map((f) => absolutePath(projectDir, f.path));
  const indexRead = needIndex.length > 0 ? gitIndex(projectDir, needIndex) : Promise.resolve(undefined);
  const snapshots: Snapshot[] = [];
  for (let i = 0; i < files.length; i += BATCH) {
    const batch = files.slice(i, i + BATCH).map((f) => snapshotFile(absolutePath(projectDir, f.path), !f.before));
    snapshots.push(...(await Promise.all(batch)));
    await new Promise<void>((resolve) => setImmediate(resolve)); // let OpenCode's own work in between batches
  }
  const index = await indexRead;
  return files.map((file, i) => verifyOne(projectDir, file, snapshots[i]!, index));
}

function verifyOne(projectDir: string, file: FileEvidence, now: Snapshot, index: Map<string, string> | undefined): FileEvidence {
  const abs = absolutePath(projectDir, file.path);
  const check: FileCheck = { verdict: "verified", exists: now.exists, basis: "none" };
  if (now.size !== undefined) check.size = now.size;
  if (now.sha256) check.sha256 = now.sha256;
  const deletedLast = file.actions.deleted !== undefined && Object.keys(file.actions).length === 1;
  if (deletedLast) check.verdict = now.exists ? "unchanged" : "verified";
  else if (!now.exists) check.verdict = "missing";
  else if (file.before) {
    check.basis = "before-write";
    if (file.before.exists && file.before.sha256 !== undefined && file.before.sha256 === now.sha256) check.verdict = "unchanged";
  } else if (index) {
    check.basis = "git-index";
    const staged = index.get(resolve(abs));
    if (staged !== undefined && staged === now.gitBlob) check.verdict = "unchanged";
  }
  return { ...file, check };
}

/** Absolute path -> blob id of the paths git's index holds; undefined when the project is not a repository. */
function gitIndex(projectDir: string, paths: string[]): Promise<Map<string, string> | undefined> {
  return new Promise((done) => {
    execFile("git", ["-C", projectDir, "ls-files", "-s", "-z", "--", ...paths], { maxBuffer: 64 * 1024 * 1024, timeout: 10_000 }, (error, stdout) => {
      if (error) return done(undefined);
      const index = new Map<string, string>();
      for (const entry of stdout.split("\0")) {
        const match = /^\d+ ([0-9a-f]{40,64}) \d+\t(.+)$/.exec(entry);
        if (match) index.set(resolve(projectDir, match[2]!), match[1]!);
      }
      done(index);
    });
  });
}
