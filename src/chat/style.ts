/** ANSI styling that is switched off as a whole when output is not a terminal (pipes, tests). */
export interface Style {
  readonly enabled: boolean;
  dim(text: string): string;
  bold(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
}

const wrap = (open: number, close: number) => (text: string) => `\x1b[${open}m${text}\x1b[${close}m`;
const identity = (text: string) => text;

export function createStyle(enabled: boolean): Style {
  if (!enabled)
    return { enabled, dim: identity, bold: identity, red: identity, green: identity, yellow: identity, cyan: identity };
  return {
    enabled,
    dim: wrap(2, 22),
    bold: wrap(1, 22),
    red: wrap(31, 39),
    green: wrap(32, 39),
    yellow: wrap(33, 39),
    cyan: wrap(36, 39),
  };
}

/** One line at most `max` characters, newlines shown as ⏎, for tool arguments and results. */
export function oneLine(text: string, max: number): string {
  const flat = text
    .trim()
    .replace(/\s*\n\s*/g, ' ⏎ ')
    .replace(/\s+/g, ' ')
    .trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
