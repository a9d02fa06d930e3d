/** A word for bash, quoted only when needed so recorded commands read as written (`bash /solution/solve.sh`). */
export function shellQuote(text: string): string {
  if (/^[\w/.,:=+-]+$/.test(text)) return text;
  return `'${text.replace(/'/g, `'\\''`)}'`;
}
