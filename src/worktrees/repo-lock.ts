const tails = new Map<string, Promise<unknown>>();

/**
 * Runs `fn` after every earlier call for the same repository has finished: git commands that
 * write the repository's shared files (.git/config, the branch rename's temporary reflog) must not
 * run at once in one process. Other processes are covered by the lock retries in git.ts.
 */
export function oneAtATime<T>(repo: string, fn: () => Promise<T>): Promise<T> {
  const previous = tails.get(repo) ?? Promise.resolve();
  const run = previous.then(fn, fn);
  const tail = run.catch(() => undefined);
  tails.set(repo, tail);
  void tail.then(() => {
    if (tails.get(repo) === tail) tails.delete(repo);
  });
  return run;
}
