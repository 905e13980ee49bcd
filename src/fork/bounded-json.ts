/**
 * JSON text of a value, written only up to a length. A tool's input can hold a whole file (a write
 * call's content): JSON.stringify would copy all of it just to show or count the first part.
 */
export type BoundedJson = {
  /** At most `maxChars` characters; equal to JSON.stringify(value) when `complete`. */
  text: string;
  complete: boolean;
};

export function boundedJson(value: unknown, maxChars: number): BoundedJson {
  const writer = new JsonWriter(maxChars);
  writer.value(value === undefined ? null : value);
  const text = writer.chunks.join("");
  return writer.full ? { text: text.slice(0, maxChars), complete: false } : { text, complete: true };
}

class JsonWriter {
  readonly chunks: string[] = [];
  length = 0;
  constructor(private readonly maxChars: number) {}

  get full(): boolean {
    return this.length > this.maxChars;
  }

  value(value: unknown): void {
    if (this.full) return;
    if (typeof value === "string") return this.string(value);
    if (Array.isArray(value)) return this.array(value);
    if (typeof value === "object" && value !== null) return this.object(value as Record<string, unknown>);
    this.push(JSON.stringify(value) ?? "null");
  }

  private string(value: string): void {
    const room = this.maxChars - this.length;
    // One character past the room is enough to know the limit is crossed.
    this.push(JSON.stringify(value.length > room ? value.slice(0, room + 1) : value));
  }

  private array(items: readonly unknown[]): void {
    this.push("[");
    for (let i = 0; i < items.length && !this.full; i++) {
      if (i > 0) this.push(",");
      const item = items[i];
      this.value(isSkippedInJson(item) ? null : item);
    }
    this.push("]");
  }

  private object(record: Record<string, unknown>): void {
    this.push("{");
    let first = true;
    for (const key of Object.keys(record)) {
      if (this.full) break;
      const item = record[key];
      if (isSkippedInJson(item)) continue;
      this.push(first ? JSON.stringify(key) + ":" : "," + JSON.stringify(key) + ":");
      first = false;
      this.value(item);
    }
    this.push("}");
  }

  private push(chunk: string): void {
    this.chunks.push(chunk);
    this.length += chunk.length;
  }
}

function isSkippedInJson(value: unknown): boolean {
  return value === undefined || typeof value === "function" || typeof value === "symbol";
}
