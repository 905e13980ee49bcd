/**
 * Checks for the `channels` option's values. Kept here (not with the other options) so that the
 * channels folder depends on nothing above it; messages never quote a URL or a secret.
 */

/** What a JSON value is, for a message: "a string", "an array", "nothing", … */
export function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "string" ? "a string" : typeof value === "object" ? "an object" : typeof value === "undefined" ? "nothing" : `a ${typeof value}`;
}

/**
 * `at.url` as a parsed http(s) URL, or undefined with a problem that names the fix. A URL carrying
 * a user name or password is refused: options are shown.
 */
export function checkHttpUrl(at: string, value: unknown, problems: string[], example: string): URL | undefined {
  if (typeof value !== "string" || value.trim() === "") {
    problems.push(`"${at}.url" must be the http(s) URL to POST to, e.g. "${example}", got ${kindOf(value)}`);
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    problems.push(`"${at}.url" is not a valid URL: write it in full, e.g. "${example}"`);
    return undefined;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    problems.push(`"${at}.url" must start with https:// or http://, got a URL with scheme ${url.protocol.slice(0, 20)}`);
    return undefined;
  }
  if (url.username || url.password) {
    problems.push(`"${at}.url" on host ${url.host} must not carry a user name or password: use a URL whose token is in its path`);
    return undefined;
  }
  return url;
}
