/** Checks shared by the options that hold URLs and nested objects (workers, channels). In core so that a feature's config parser needs nothing above it: options/ imports the parsers, never the other way round. */

/** What a JSON value is, for a message: "a string", "an array", "nothing", … */
export function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "string" ? "a string" : typeof value === "object" ? "an object" : typeof value === "undefined" ? "nothing" : `a ${typeof value}`;
}

/**
 * `at`'s http(s) URL, parsed, or undefined with a problem that names the fix. A URL carrying a
 * user name or password is refused (`credentials` says what to use instead): options are shown.
 */
export function checkHttpUrl(at: string, value: unknown, problems: string[], text: { what: string; example: string; credentials: string }): URL | undefined {
  if (typeof value !== "string" || value.trim() === "") {
    problems.push(`"${at}.url" must be ${text.what}, e.g. "${text.example}", got ${kindOf(value)}`);
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    problems.push(`"${at}.url" is not a valid URL: write it in full, e.g. "${text.example}"`);
    return undefined;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    problems.push(`"${at}.url" must start with https:// or http://, got a URL with scheme ${url.protocol.slice(0, 20)}`);
    return undefined;
  }
  if (url.username || url.password) {
    problems.push(`"${at}.url" on host ${url.host} must not carry a user name or password: ${text.credentials}`);
    return undefined;
  }
  return url;
}
