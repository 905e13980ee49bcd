/**
 * Common token shapes, masked before anything a child ran or saw is stored. Each keeps a short
 * prefix so a reader can tell what was there.
 */
const PATTERNS: [RegExp, string][] = [
  [/-----BEGIN ([A-Z ]*)PRIVATE KEY-----[\s\S]*?(-----END \1PRIVATE KEY-----|$)/g, "-----BEGIN $1PRIVATE KEY-----[MASKED]"],
  [/\b(gh[pousr]_)[A-Za-z0-9]{20,}\b/g, "$1[MASKED]"],
  [/\b(github_pat_)[A-Za-z0-9_]{20,}\b/g, "$1[MASKED]"],
  [/\b(sk-(?:ant-|proj-)?)[A-Za-z0-9_-]{16,}\b/g, "$1[MASKED]"],
  [/\b(AKIA|ASIA)[A-Z0-9]{16}\b/g, "$1[MASKED]"],
  [/\b(xox[abprs]-)[A-Za-z0-9-]{10,}\b/g, "$1[MASKED]"],
  [/\b(AIza)[A-Za-z0-9_-]{30,}\b/g, "$1[MASKED]"],
  [/\b(Bearer|Token)\s+[A-Za-z0-9._~+/=-]{8,}/gi, "$1 [MASKED]"],
  [/\b(eyJ[A-Za-z0-9_-]{8,})\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b/g, "eyJ[MASKED-JWT]"],
  [/\b([A-Za-z0-9_]*(?:API_?KEY|SECRET|TOKEN|PASSWORD|PASSWD)[A-Za-z0-9_]*)(\s*[=:]\s*)(["']?)[^\s"']{6,}\3/gi, "$1$2$3[MASKED]$3"],
  [/(\/\/[^/\s:@]+:)[^@\s/]{3,}@/g, "$1[MASKED]@"],
];

export function maskSecrets(text: string): string {
  let out = text;
  for (const [pattern, replacement] of PATTERNS) out = out.replace(pattern, replacement);
  return out;
}
