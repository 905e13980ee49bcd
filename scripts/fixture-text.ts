import { hostname } from "node:os";
import { PACKAGE_DIR } from "../test/harness/plugin-stack.ts";

/** What a capture run's temp root becomes in a committed fixture. */
export const FIXTURE_ROOT = "/tmp/ocbt-fixture";

/** The JSON text with the run's temp root replaced; fails on anything else machine-specific. */
export function fixtureText(value: unknown, root: string): string {
  const text = JSON.stringify(value, null, 1).split(root).join(FIXTURE_ROOT);
  const leaks = [PACKAGE_DIR.replace(/\/$/, ""), hostname()].filter((s) => s.length >= 4 && text.includes(s));
  if (/\/ocbt-(?!fixture)/.test(text)) leaks.push("another ocbt- temp dir");
  if (leaks.length > 0) throw new Error(`fixture still holds machine-specific values: ${leaks.join(", ")}`);
  return text + "\n";
}
