/**
 * How many leading words name what a command does (`git commit`, `npm run build`, `ls`): the
 * "always" rule offered for a command is those words and ` *`. The depths are OpenCode 1.18.33's
 * own (its bash tool's BashArity table, read from the shipped binary), so an "always" given to the
 * plugin reads, and reaches, exactly as far as one given to the bash tool. Unlisted: the first
 * word alone.
 */
const DEPTHS: Record<2 | 3, string> = { // comma-separated heads
  2: `bazel, brew, bun, cargo, cdk, cf, cmake, composer, consul, crictl, deno, docker, eksctl, firebase,
    flyctl, git, go, gradle, helm, heroku, hugo, ip, kind, kubectl, kustomize, make, mc, minikube,
    mongosh, mysql, mvn, ng, npm, nvm, nx, openssl, pip, pipenv, pnpm, poetry, podman, psql, pulumi,
    pyenv, python, rake, rbenv, redis-cli, rustup, serverless, skaffold, sls, sst, swift, systemctl,
    terraform, tmux, turbo, ufw, vault, vercel, volta, wp, yarn`,
  3: `aws, az, doctl, gcloud, gh, sfdx, bun run, bun x, cargo add, cargo run, consul kv, deno task,
    docker builder, docker compose, docker container, docker image, docker network, docker volume,
    eksctl create, git config, git remote, git stash, ip addr, ip link, ip netns, ip route,
    kind create, kubectl kustomize, kubectl rollout, mc admin, npm exec, npm init, npm run, npm view,
    openssl req, openssl x509, pnpm dlx, pnpm exec, pnpm run, podman container, podman image,
    pulumi stack, terraform workspace, vault auth, vault kv, yarn dlx, yarn run`,
};

let arity: Map<string, number> | undefined;

function arityTable(): Map<string, number> {
  if (arity) return arity;
  arity = new Map();
  for (const depth of [2, 3] as const) {
    for (const head of DEPTHS[depth].split(",")) arity.set(head.trim().replace(/\s+/g, " "), depth);
  }
  return arity;
}

/** The longest listed head of `words` decides how many words the prefix keeps. */
export function commandPrefix(words: string[]): string[] {
  const table = arityTable();
  for (let n = words.length; n > 0; n--) {
    const depth = table.get(words.slice(0, n).join(" "));
    if (depth !== undefined) return words.slice(0, depth);
  }
  return words.slice(0, 1);
}
