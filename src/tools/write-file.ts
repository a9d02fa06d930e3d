import { z } from 'zod';
import { defineTool } from './tool.js';
import { ToolFailure } from './tool-failure.js';
import { inSandbox } from './sandbox-failure.js';

export const WriteFileParameters = z.object({
  path: z.string().describe("Path to the file to write (will be created if it doesn't exist, overwritten if it does)"),
  content: z.string().describe('Complete content to write to the file'),
  cross_profile: z
    .boolean()
    .default(false)
    .describe(
      "Opt out of the cross-profile soft guard. Defaults to false. Set true ONLY after explicit user direction to edit another Hermes profile's skills/plugins/cron/memories — by default these writes are blocked with a warning because they affect a different profile than the one this session is running under.",
    ),
});

/** traj runs one sandbox per rollout, with no Hermes profiles: the flag has nothing to guard. */
export const CROSS_PROFILE_NOTE = 'cross_profile has no effect here: this sandbox has no other profiles';

export const writeFileTool = defineTool({
  name: 'write_file',
  toolset: 'file',
  confinesOwnPaths: true,
  version: '2',
  // Hermes' words, as hermes-agent sends them (tests/fixtures/hermes/tool-schemas.json).
  description:
    "Write content to a file, completely replacing existing content. Use this instead of echo/cat heredoc in terminal. Creates parent directories automatically. OVERWRITES the entire file — use 'patch' for targeted edits. Auto-runs syntax checks on .py/.json/.yaml/.toml and other linted languages; only NEW errors introduced by this write are surfaced (pre-existing errors are filtered out).",
  parameters: WriteFileParameters,
  run: async ({ path, content, cross_profile: crossProfile }, { sandbox }) => {
    if (path === '') throw new ToolFailure('path is empty', 'name the file to write');
    await inSandbox(() => sandbox.writeFile(path, content));
    return {
      path,
      bytes_written: Buffer.byteLength(content, 'utf8'),
      ...(crossProfile ? { note: CROSS_PROFILE_NOTE } : {}),
    };
  },
});
