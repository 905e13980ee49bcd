import { randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

/** The session cookie's name carries the port: cookies are shared across ports, so two dashboards on one machine would otherwise overwrite each other's. */
export const cookieName = (port: number) => `obt_session_${port}`;

/**
 * The dashboard's one secret: a random token printed in the URL, exchanged at the first visit
 * for an HttpOnly SameSite=Strict cookie named after the port. Every request needs the cookie; a state-changing one
 * also needs an Origin header naming this server, and the Host header must name it too (so a
 * page on another site, or a DNS name rebound to 127.0.0.1, gets nothing).
 */
export class DashboardAuth {
  readonly token: string;
  private hosts = new Set<string>();
  private cookie = cookieName(0);

  constructor(token = randomBytes(24).toString("base64url")) {
    this.token = token;
  }

  /** The host:port names this server answers to, and its port (set once it listens). */
  listening(names: string[], port: number): void {
    this.hosts = new Set(names.map((n) => n.toLowerCase()));
    this.cookie = cookieName(port);
  }

  hostAllowed(req: IncomingMessage): boolean {
    return this.hosts.has(String(req.headers.host ?? "").toLowerCase());
  }

  /** The Origin header is one of this server's own origins; a missing Origin is refused. */
  originAllowed(req: IncomingMessage): boolean {
    const origin = req.headers.origin;
    if (typeof origin !== "string") return false;
    return [...this.hosts].some((host) => origin.toLowerCase() === `http://${host}`);
  }

  hasCookie(req: IncomingMessage): boolean {
    const value = readCookie(String(req.headers.cookie ?? ""), this.cookie);
    return value !== undefined && this.matches(value);
  }

  matches(candidate: string): boolean {
    const a = Buffer.from(candidate);
    const b = Buffer.from(this.token);
    return a.length === b.length && timingSafeEqual(a, b);
  }

  setCookieHeader(): string {
    return `${this.cookie}=${this.token}; HttpOnly; SameSite=Strict; Path=/`;
  }
}

function readCookie(header: string, name: string): string | undefined {
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
