/**
 * The doc-test's reading of a Markdown page (docs/development.md, "Examples in the docs"):
 *
 * - every ```sh block is an example the doc-test runs, in order, in one scratch folder per page;
 * - a ```text block right after it (nothing but blank lines between) is its expected output:
 *   stdout and stderr as they interleave on a terminal;
 * - in expected output, a line holding only `...` matches any number of lines (none included),
 *   and `…` inside a line matches any run of characters on that line;
 * - an HTML comment on the line before the ```sh fence adjusts the block:
 *   `<!-- doc-test: exit N -->` (the block must end with status N; default 0), or
 *   `<!-- doc-test: skip REASON -->` (not run; the reason is required and stays in the page).
 */
export interface ShellExample {
  page: string;
  /** 1-based line of the opening fence. */
  line: number;
  script: string;
  expectedOutput?: string;
  expectedExit: number;
  skip?: string;
}

const DIRECTIVE = /^<!--\s*doc-test:\s*(skip|exit)\b\s*(.*?)\s*-->\s*$/;

/** The shell examples of one page, or a message naming the page and line when a directive is malformed. */
export function shellExamples(page: string, text: string): ShellExample[] {
  const lines = text.split('\n');
  const examples: ShellExample[] = [];
  let index = 0;
  while (index < lines.length) {
    const fence = /^(\s*)(`{3,})(\S*)\s*$/.exec(lines[index]!);
    if (!fence) {
      index += 1;
      continue;
    }
    const [, , ticks, info] = fence;
    const body: string[] = [];
    const start = index;
    index += 1;
    while (index < lines.length && lines[index]!.trim() !== ticks) body.push(lines[index++]!);
    index += 1;
    if (info !== 'sh') continue;
    const example: ShellExample = { page, line: start + 1, script: `${body.join('\n')}\n`, expectedExit: 0 };
    applyDirective(example, lines[start - 1] ?? '');
    const output = followingOutput(lines, index);
    if (output) {
      example.expectedOutput = output.text;
      index = output.next;
    }
    examples.push(example);
  }
  return examples;
}

function applyDirective(example: ShellExample, previous: string): void {
  if (!previous.includes('doc-test')) return;
  const match = DIRECTIVE.exec(previous.trim());
  if (!match) throw new Error(`${example.page}:${example.line - 1}: unreadable doc-test directive: ${previous.trim()}`);
  const [, kind, argument] = match;
  if (kind === 'skip') {
    if (!argument) throw new Error(`${example.page}:${example.line - 1}: a skipped example must say why`);
    example.skip = argument;
  } else {
    const code = Number(argument);
    if (!Number.isInteger(code)) throw new Error(`${example.page}:${example.line - 1}: exit needs a number`);
    example.expectedExit = code;
  }
}

/** A ```text block after `from`, past blank lines only. */
function followingOutput(lines: string[], from: number): { text: string; next: number } | undefined {
  let index = from;
  while (index < lines.length && lines[index]!.trim() === '') index += 1;
  if (!/^```text\s*$/.test(lines[index] ?? '')) return undefined;
  const body: string[] = [];
  index += 1;
  while (index < lines.length && lines[index]!.trim() !== '```') body.push(lines[index++]!);
  return { text: body.join('\n'), next: index + 1 };
}

/**
 * Whether `actual` output is what the page shows. Lines are compared without trailing spaces;
 * empty lines at the start and end of either side do not count.
 */
export function outputMatches(expected: string, actual: string): boolean {
  const want = trimLines(expected);
  const got = trimLines(actual);
  const patterns = want.map((line) => (line.trim() === '...' ? undefined : linePattern(line)));
  // memo[i][j]: patterns from i match lines from j.
  const memo = new Map<string, boolean>();
  const match = (i: number, j: number): boolean => {
    const key = `${i}:${j}`;
    const known = memo.get(key);
    if (known !== undefined) return known;
    let result: boolean;
    if (i === patterns.length) result = j === got.length;
    else if (patterns[i] === undefined) result = match(i + 1, j) || (j < got.length && match(i, j + 1));
    else result = j < got.length && patterns[i]!.test(got[j]!) && match(i + 1, j + 1);
    memo.set(key, result);
    return result;
  };
  return match(0, 0);
}

function linePattern(line: string): RegExp {
  const parts = line.split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('.*?')}$`);
}

function trimLines(text: string): string[] {
  const lines = text.split('\n').map((line) => line.trimEnd());
  while (lines.length > 0 && lines[0] === '') lines.shift();
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}
