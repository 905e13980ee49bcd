import type { SourceLoaders } from "./source-loaders.ts";

/** The real source modules, each imported the first time a trigger of its kind runs here. */
export function defaultLoaders(options: { githubApiUrl: string }): SourceLoaders {
  return {
    command: async () => (await import("./command-source.ts")).startCommandSource,
    watch: async () => (await import("./watch-source.ts")).startWatchSource,
    github: async () => {
      const { startGithubSource, githubToken } = await import("./github-source.ts");
      return (spec, ctx) => startGithubSource(spec, ctx, { apiUrl: options.githubApiUrl, token: () => githubToken({ apiUrl: options.githubApiUrl }) });
    },
    webhookListener: async () => (await import("./webhook-listener.ts")).startWebhookListener,
  };
}
