import { z } from 'zod';
import { defineTool, ToolFailure } from './registry.js';
import { inSandbox } from './sandbox-failure.js';

export const SEARCH_DEFAULT_LIMIT = 50;
const SEARCH_MAX_LIMIT = 1_000;
const SEARCH_TIMEOUT_MS = 60_000;
/** Matches inside minified files can be one enormous line; show the start only. */
const MATCH_MAX_CHARS = 300;

export const SearchFilesParameters = z.object({
  pattern: z
    .string()
    .min(1)
    .refine((pattern) => !pattern.includes('\0'), 'must not contain a NUL character')
    .describe(
      'For target "content": an extended regular expression (grep -E syntax). For target "files": a glob on names, e.g. "*.py" or "src/*.ts".',
    ),
  target: z
    .enum(['content', 'files'])
    .default('content')
    .describe('"content" searches inside files and returns path:line:text; "files" finds files and folders by name.'),
  path: z
    .string()
    .min(1)
    .default('.')
    .refine((path) => !path.includes('\0'), 'must not contain a NUL character')
    .describe(
      'Folder (or file) to search, relative to the working directory or absolute (default: the working directory).',
    ),
  limit: z
    .number()
    .int()
    .min(1)
    .max(SEARCH_MAX_LIMIT)
    .default(SEARCH_DEFAULT_LIMIT)
    .describe(`Most results to return (default ${SEARCH_DEFAULT_LIMIT}).`),
});
type SearchArguments = z.infer<typeof SearchFilesParameters>;

/*
 * Both commands exist in a bare Debian image and on any Linux host, so search behaves the same in
 * every sandbox. User input reaches them only through environment variables, never spliced into
 * the command text, so no quoting can break out.
 */
const CONTENT_COMMAND =
  'grep -rnHEI --exclude-dir=.git -e "$TRAJ_SEARCH_PATTERN" -- "$TRAJ_SEARCH_PATH" | head -n "$TRAJ_SEARCH_ROWS"; exit "${PIPESTATUS[0]}"';
const filesCommand = (test: '-name' | '-path') =>
  `find "$TRAJ_SEARCH_PATH" -mindepth 1 -name .git -prune -o ${test} "$TRAJ_SEARCH_PATTERN" \\( -type d -printf '%p/\\n' -o -printf '%p\\n' \\) ` +
  '| LC_ALL=C sort | head -n "$TRAJ_SEARCH_ROWS"; exit "${PIPESTATUS[0]}"';

/** A glob with a slash matches the path below the search folder at any depth (`**` as `*`). */
function pathGlob(pattern: string): string {
  return `*/${pattern.replace(/^(\.\/)+/, '').replace(/\*\*\/?/g, '*')}`;
}

function plan(args: SearchArguments): { command: string; pattern: string } {
  if (args.target === 'content') return { command: CONTENT_COMMAND, pattern: args.pattern };
  if (args.pattern.includes('/')) return { command: filesCommand('-path'), pattern: pathGlob(args.pattern) };
  return { command: filesCommand('-name'), pattern: args.pattern };
}

function tidy(line: string): string {
  const path = line.startsWith('./') ? line.slice(2) : line;
  return path.length > MATCH_MAX_CHARS ? `${path.slice(0, MATCH_MAX_CHARS)} [...]` : path;
}

export const searchFilesTool = defineTool({
  name: 'search_files',
  toolset: 'file',
  version: '1',
  description:
    'Search the sandbox. target "content": lines matching an extended regex, as path:line:text (binary files and .git skipped). ' +
    'target "files": files and folders whose names match a glob (folders end with /). Results are capped by limit.',
  parameters: SearchFilesParameters,
  run: async (args, { sandbox, signal }) => {
    const { command, pattern } = plan(args);
    const result = await inSandbox(() =>
      sandbox.exec(command, {
        env: { TRAJ_SEARCH_PATTERN: pattern, TRAJ_SEARCH_PATH: args.path, TRAJ_SEARCH_ROWS: String(args.limit + 1) },
        timeoutMs: SEARCH_TIMEOUT_MS,
        signal,
      }),
    );
    if (result.aborted) throw new Error('interrupted');
    const rows = result.stdout.split('\n').filter((line) => line !== '');
    const what = args.target === 'content' ? 'matches' : 'files';
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
      return `no ${what} for '${args.pattern}' in '${args.path}'`;
    }
    const shown = rows.slice(0, args.limit).map(tidy);
    if (rows.length > args.limit)
      shown.push(`[showing the first ${args.limit} ${what}; more exist — narrow the pattern or path, or raise limit]`);
    else if (result.timedOut) shown.push('[search timed out; these results are incomplete]');
    return shown.join('\n');
  },
});
