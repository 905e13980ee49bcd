export type Column<Row> = { header: string; value: (row: Row) => string; maxWidth?: number };

/** A plain-text table: padded columns, long cells cut with an ellipsis, no trailing spaces. */
export function formatTable<Row>(rows: Row[], columns: Column<Row>[]): string {
  const cells = rows.map((row) => columns.map((column) => clip(oneLine(column.value(row)), column.maxWidth)));
  const widths = columns.map((column, i) => Math.max(column.header.length, ...cells.map((r) => r[i]!.length)));
  const line = (values: string[]) =>
    values
      .map((value, i) => value.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  return [line(columns.map((c) => c.header)), ...cells.map(line)].join("\n") + "\n";
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

function clip(text: string, maxWidth = Infinity): string {
  return text.length <= maxWidth ? text : `${text.slice(0, maxWidth - 1)}…`;
}
