import { z } from 'zod';
import { defineTool } from './tool.js';
import { ToolFailure } from './tool-failure.js';
import { inSandbox } from './sandbox-failure.js';

export const SEARCH_DEFAULT_LIMIT = 50;
const SEARCH_MAX_LIMIT = 1_000;
const SEARCH_MAX_CONTEXT = 20;
const SEARCH_TIMEOUT_MS = 60_000;
/** Matches inside minified files can be one enormous line; show the start only. */
const MATCH_MAX_CHARS = 300;

export const SearchFilesParameters = z.object({
  pattern: z.string().describe("Regex pattern for content search, or glob pattern (e.g., '*.py') for file search"),
  target: z
    .enum(['content', 'files'])
    .default('content')
    .describe("'content' searches inside file contents, 'files' searches for files by name"),
  path: z.string().default('.').describe('Directory or file to search in (default: current working directory)'),
  file_glob: z
    .string()
    .optional()
    .describe("Filter files by pattern in grep mode (e.g., '*.py' to only search Python files)"),
  limit: z.number().int().default(SEARCH_DEFAULT_LIMIT).describe('Maximum number of results to return (default: 50)'),
  offset: z.number().int().default(0).describe('Skip first N results for pagination (default: 0)'),
  output_mode: z
    .enum(['content', 'files_only', 'count'])
    .default('content')
    .describe(
      "Output format for grep mode: 'content' shows matching lines with line numbers, 'files_only' lists file paths, 'count' shows match counts per file",
    ),
  context: z.number().int().default(0).describe('Number of context lines before and after each match (grep mode only)'),
});
type SearchArguments = z.infer<typeof SearchFilesParameters>;

/*
 * Both commands exist in a bare Debian image and on any Linux host, so search behaves the same in
 * every sandbox. User input reaches them only through environment variables, never spliced into
 * the command text, so no quoting can break out. Each prints every result; the tool pages them.
 */
const GREP_FLAGS: Record<SearchArguments['output_mode'], string> = {
  content: '-rnHEI',
  files_only: '-rlEI',
  count: '-rcEI',
};
function grepCommand(args: SearchArguments): string {
  const glob = args.file_glob ? ' --include="$TRAJ_SEARCH_GLOB"' : '';
  const context = args.output_mode === 'content' && args.context > 0 ? ` -C ${args.context}` : '';
  const counts = args.output_mode === 'count' ? " | grep -v ':0$'" : '';
  return `grep ${GREP_FLAGS[args.output_mode]}${context}${glob} --exclude-dir=.git -e "$TRAJ_SEARCH_PATTERN" -- "$TRAJ_SEARCH_PATH"${counts}; exit "\${PIPESTATUS[0]}"`;
}
/** Newest first, as Hermes lists them. */
const filesCommand = (test: '-name' | '-path') =>
  `find "$TRAJ_SEARCH_PATH" -mindepth 1 -name .git -prune -o ${test} "$TRAJ_SEARCH_PATTERN" \\( -type d -printf '%T@ %p/\\n' -o -printf '%T@ %p\\n' \\) ` +
  '| LC_ALL=C sort -k1,1nr -k2 | cut -d" " -f2-; exit "${PIPESTATUS[0]}"';

/** A glob with a slash matches the path below the search folder at any depth (`**` as `*`). */
function pathGlob(pattern: string): string {
  return `*/${pattern.replace(/^(\.\/)+/, '').replace(/\*\*\/?/g, '*')}`;
}

function plan(args: SearchArguments): { command: string; pattern: string } {
  if (args.target === 'content') return { command: grepCommand(args), pattern: args.pattern };
  if (args.pattern.includes('/')) return { command: filesCommand('-path'), pattern: pathGlob(args.pattern) };
  return { command: filesCommand('-name'), pattern: args.pattern };
}

function tidy(line: string): string {
  const path = line.startsWith('./') ? line.slice(2) : line;
  return path.length > MATCH_MAX_CHARS ? `${path.slice(0, MATCH_MAX_CHARS)} [...]` : path;
}

function checkArguments(args: SearchArguments): void {
  if (args.pattern === '' || args.pattern.includes('\0'))
    throw new ToolFailure('pattern is empty or holds a NUL character', 'pass a regex (content) or a glob (files)');
  if (args.path === '' || args.path.includes('\0')) throw new ToolFailure('path is empty or holds a NUL character');
  if (args.limit < 1 || args.limit > SEARCH_MAX_LIMIT)
    throw new ToolFailure(`limit ${args.limit} is out of range`, `use 1 to ${SEARCH_MAX_LIMIT}`);
  if (args.offset < 0) throw new ToolFailure(`offset ${args.offset} is negative`, 'use 0 or more');
  if (args.context < 0 || args.context > SEARCH_MAX_CONTEXT)
    throw new ToolFailure(`context ${args.context} is out of range`, `use 0 to ${SEARCH_MAX_CONTEXT}`);
}

function page(rows: readonly string[], args: SearchArguments, timedOut: boolean): string {
  const what = args.target === 'files' ? 'files' : args.output_mode === 'content' ? 'lines' : 'files';
  const shown = rows.slice(args.offset, args.offset + args.limit).map(tidy);
  if (shown.length === 0) return `no ${what} past offset ${args.offset}: there are ${rows.length}`;
  const end = args.offset + shown.length;
  if (end < rows.length)
    shown.push(`[${what} ${args.offset + 1}-${end} of ${rows.length}; call again with offset ${end} for more]`);
  else if (timedOut) shown.push('[search timed out; these results are incomplete]');
  return shown.join('\n');
}

export const searchFilesTool = defineTool({
  name: 'search_files',
  toolset: 'file',
  version: '2',
  // Hermes' words, as hermes-agent sends them (tests/fixtures/hermes/tool-schemas.json).
  description:
    "Search file contents or find files by name. Use this instead of grep/rg/find/ls in terminal. Ripgrep-backed, faster than shell equivalents.\n\nContent search (target='content'): Regex search inside files. Output modes: full matches with line numbers, file paths only, or match counts.\n\nFile search (target='files'): Find files by glob pattern (e.g., '*.py', '*config*'). Also use this instead of ls — results sorted by modification time.",
  parameters: SearchFilesParameters,
  run: async (args, { sandbox, signal }) => {
    checkArguments(args);
    const { command, pattern } = plan(args);
    const env = { TRAJ_SEARCH_PATTERN: pattern, TRAJ_SEARCH_PATH: args.path, TRAJ_SEARCH_GLOB: args.file_glob ?? '' };
    const result = await inSandbox(() => sandbox.exec(command, { env, timeoutMs: SEARCH_TIMEOUT_MS, signal }));
    if (result.aborted) throw new Error('interrupted');
    const rows = result.stdout.split('\n').filter((line) => line !== '');
    if (rows.length === 0) {
      // grep exits 1 for "no match" but 2 for a bad regex or path; find exits 1 for a bad path.
      const failed = args.target === 'content' ? result.exitCode > 1 : result.exitCode !== 0;
      if (failed && result.stderr.trim() !== '')
        throw new ToolFailure(
          `search_files failed: ${result.stderr.trim()}`,
          'check the pattern syntax and that path exists',
        );
      if (result.timedOut)
        throw new ToolFailure('search_files timed out before finding anything', 'search a smaller folder with path');
      return `no ${args.target === 'content' ? 'matches' : 'files'} for '${args.pattern}' in '${args.path}'`;
    }
    return page(rows, args, result.timedOut);
  },
});
