import { z } from 'zod';
import type { Sandbox } from '../sandbox/sandbox.js';
import { defineTool } from './tool.js';
import { ToolFailure } from './tool-failure.js';
import { inSandbox } from './sandbox-failure.js';
import { lineAt, readTextFile } from './text-file.js';
import { applyHunks, parseV4a, type V4aOperation } from './v4a-patch.js';
import { CROSS_PROFILE_NOTE } from './write-file.js';

export const PatchParameters = z.object({
  // Required, as Hermes lists it, with its default shown (the schema a model trained on Hermes saw).
  mode: z
    .enum(['replace', 'patch'])
    .meta({ default: 'replace' })
    .describe(
      "Edit mode. 'replace' (default): requires path + old_string + new_string. 'patch': requires patch content only.",
    ),
  path: z.string().optional().describe("REQUIRED when mode='replace'. File path to edit."),
  old_string: z
    .string()
    .optional()
    .describe(
      "REQUIRED when mode='replace'. Exact text to find and replace. Must be unique in the file unless replace_all=true. Include surrounding context lines to ensure uniqueness.",
    ),
  new_string: z
    .string()
    .optional()
    .describe("REQUIRED when mode='replace'. Replacement text. Pass empty string '' to delete the matched text."),
  replace_all: z
    .boolean()
    .default(false)
    .describe('Replace all occurrences instead of requiring a unique match (default: false)'),
  patch: z
    .string()
    .optional()
    .describe(
      "REQUIRED when mode='patch'. V4A format patch content. Format:\n*** Begin Patch\n*** Update File: path/to/file\n@@ context hint @@\n context line\n-removed line\n+added line\n*** End Patch",
    ),
  cross_profile: z
    .boolean()
    .default(false)
    .describe(
      "Opt out of the cross-profile soft guard. Defaults to false. Set true ONLY after explicit user direction to edit another Hermes profile's skills/plugins/cron/memories.",
    ),
});
type PatchArguments = z.infer<typeof PatchParameters>;

function positionsOf(text: string, needle: string): number[] {
  const positions: number[] = [];
  for (let index = text.indexOf(needle); index !== -1; index = text.indexOf(needle, index + needle.length))
    positions.push(index);
  return positions;
}

/** Replace mode: exact occurrences first; failing those, the same lines with whitespace differences. */
export function replaceText(path: string, text: string, oldString: string, newString: string, all: boolean): string {
  if (oldString === '') throw new ToolFailure('old_string is empty', 'copy the text to replace from read_file');
  const positions = positionsOf(text, oldString);
  if (positions.length > 1 && !all) {
    const lines = positions.map((position) => lineAt(text, position)).join(', ');
    throw new ToolFailure(
      `old_string matches ${positions.length} times in '${path}' (at lines ${lines})`,
      'include more surrounding lines in old_string so that it matches once, or pass replace_all=true',
    );
  }
  if (positions.length > 0)
    return all ? text.split(oldString).join(newString) : text.replace(oldString, () => newString);
  // Whitespace-tolerant: the lines of old_string, each compared trimmed (indentation drift).
  const oldLines = oldString.replace(/\n$/, '').split('\n');
  const hunk = { line: 1, before: oldLines, after: newString === '' ? [] : newString.replace(/\n$/, '').split('\n') };
  try {
    return applyHunks(path, text, [hunk]);
  } catch {
    throw new ToolFailure(
      `old_string was not found in '${path}'`,
      'read the file with read_file and copy old_string as it is there (whitespace differences are tolerated)',
    );
  }
}

/** Loaded with the first patch: `diff` is 19 modules, ~16 ms of every run's start-up otherwise. */
let diffPackage: Promise<typeof import('diff')> | undefined;

function unifiedDiff(
  createTwoFilesPatch: typeof import('diff')['createTwoFilesPatch'],
  path: string,
  before: string | undefined,
  after: string | undefined,
): string {
  return createTwoFilesPatch(
    before === undefined ? '/dev/null' : `a/${path}`,
    after === undefined ? '/dev/null' : `b/${path}`,
    before ?? '',
    after ?? '',
    undefined,
    undefined,
    { context: 3 },
  )
    .split('\n')
    .slice(1)
    .join('\n');
}

interface PlannedChange {
  path: string;
  before?: string;
  after?: string;
}

async function planOperation(sandbox: Sandbox, operation: V4aOperation): Promise<PlannedChange[]> {
  switch (operation.kind) {
    case 'add':
      return [{ path: operation.path, after: operation.content }];
    case 'delete':
      return [{ path: operation.path, before: await readTextFile(sandbox, operation.path) }];
    case 'move': {
      const text = await readTextFile(sandbox, operation.path);
      return [
        { path: operation.path, before: text },
        { path: operation.moveTo, after: text },
      ];
    }
    case 'update': {
      const before = await readTextFile(sandbox, operation.path);
      const after = applyHunks(operation.path, before, operation.hunks);
      if (!operation.moveTo) return [{ path: operation.path, before, after }];
      return [
        { path: operation.path, before },
        { path: operation.moveTo, after },
      ];
    }
  }
}

async function writeChange(sandbox: Sandbox, change: PlannedChange): Promise<void> {
  if (change.after !== undefined) {
    await inSandbox(() => sandbox.writeFile(change.path, change.after!));
    return;
  }
  const absolute = await inSandbox(() => sandbox.resolvePath(change.path));
  const removed = await inSandbox(() =>
    sandbox.exec('rm -f -- "$TRAJ_PATCH_PATH"', { env: { TRAJ_PATCH_PATH: absolute } }),
  );
  if (removed.exitCode !== 0) throw new ToolFailure(`could not delete '${change.path}': ${removed.stderr.trim()}`);
}

/** Every file is read and every hunk matched before the first write: a bad hunk changes nothing. */
async function applyChanges(sandbox: Sandbox, changes: readonly PlannedChange[]) {
  for (const change of changes) await writeChange(sandbox, change);
  diffPackage ??= import('diff');
  const { createTwoFilesPatch } = await diffPackage;
  return {
    success: true,
    diff: changes.map((change) => unifiedDiff(createTwoFilesPatch, change.path, change.before, change.after)).join(''),
    files_modified: changes.filter((c) => c.before !== undefined && c.after !== undefined).map((c) => c.path),
    files_created: changes.filter((c) => c.before === undefined).map((c) => c.path),
    files_deleted: changes.filter((c) => c.after === undefined).map((c) => c.path),
  };
}

async function plan(args: PatchArguments, sandbox: Sandbox): Promise<PlannedChange[]> {
  if (args.mode === 'patch') {
    if (!args.patch) throw new ToolFailure("mode='patch' needs patch", 'pass the V4A patch text in patch');
    const changes: PlannedChange[] = [];
    for (const operation of parseV4a(args.patch)) changes.push(...(await planOperation(sandbox, operation)));
    return changes;
  }
  const missing = (['path', 'old_string', 'new_string'] as const).filter((name) => args[name] === undefined);
  if (missing.length > 0)
    throw new ToolFailure(`mode='replace' needs ${missing.join(', ')}`, 'pass path, old_string and new_string');
  const path = args.path!;
  const before = await readTextFile(sandbox, path);
  return [{ path, before, after: replaceText(path, before, args.old_string!, args.new_string!, args.replace_all) }];
}

export const patchTool = defineTool({
  name: 'patch',
  toolset: 'file',
  confinesOwnPaths: true,
  version: '2',
  // Hermes' words, as hermes-agent sends them (tests/fixtures/hermes/tool-schemas.json).
  description:
    "Targeted find-and-replace edits in files. Use this instead of sed/awk in terminal. Uses fuzzy matching (9 strategies) so minor whitespace/indentation differences won't break it. Returns a unified diff. Auto-runs syntax checks after editing.\n\nREPLACE MODE (mode='replace', default): find a unique string and replace it. REQUIRED PARAMETERS: mode, path, old_string, new_string.\nPATCH MODE (mode='patch'): apply V4A multi-file patches for bulk changes. REQUIRED PARAMETERS: mode, patch.",
  parameters: PatchParameters,
  run: async (args, { sandbox }) => {
    const result = await applyChanges(sandbox, await plan(args, sandbox));
    return args.cross_profile ? { ...result, note: CROSS_PROFILE_NOTE } : result;
  },
});
