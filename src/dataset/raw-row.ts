/** A row as a format reader yields it, before validation: a value, or why it could not be decoded. */
export type RawRow = { line: number; value: unknown } | { line: number; error: string };
