import { resolve } from 'node:path';
import { localIsolationWarning } from '../sandbox/local.js';
import { ConfigError } from '../errors.js';
import { loadFork, parseTurn, runChat, type ForkedConversation } from '../chat/index.js';
import { loadAgentConfig, type AgentConfig } from '../run/load-run-config.js';
import {
  ENDPOINT_OPTIONS,
  integerOption,
  listOption,
  stringOption,
  type CommandDefinition,
  type ParsedCommand,
} from './command.js';
import { resolveEndpoint } from './endpoint.js';
import { agentSettingsFrom, systemPromptFrom } from '../run/run-setup.js';

const DEFAULT_TOOLSETS = [
  'terminal',
  'file',
  'todo',
  'memory',
  'skills',
  'session_search',
  'clarify',
  'code_execution',
  'delegation',
];
const DEFAULT_MAX_TURNS = 20;

export const command: CommandDefinition = {
  name: 'chat',
  summary: 'interactive debug chat on the agent core: streaming, tools, sandboxes, sessions, forks of stored rollouts',
  usage:
    'traj chat [--toolsets a,b] [--sandbox local|docker] [--workdir DIR] [--system FILE] [--resume ID] [--fork RUN KEY [TURN]] [endpoint flags]',
  allowPositionals: true,
  options: {
    toolsets: { type: 'string', value: 'a,b', description: 'toolsets to offer', default: DEFAULT_TOOLSETS.join(',') },
    sandbox: {
      type: 'string',
      value: 'local|docker',
      description: "where tool commands run (default local; with --fork, the run's)",
    },
    image: { type: 'string', value: 'IMAGE', description: 'docker image for --sandbox docker' },
    workdir: {
      type: 'string',
      value: 'DIR',
      description: 'local sandbox: work in this existing folder instead of an empty temporary one',
    },
    system: { type: 'string', value: 'FILE', description: 'file holding the instructions part of the system prompt' },
    skills: {
      type: 'string',
      value: 'DIR',
      description: 'another folder of skills (read-only; TRAJ_HOME/skills is the writable one)',
    },
    'no-context-files': {
      type: 'boolean',
      description: 'do not put AGENTS.md / .traj.md of the working folder and its repository into the system prompt',
    },
    'max-turns': {
      type: 'string',
      value: 'N',
      description: 'model calls per message before the final-answer call',
      default: String(DEFAULT_MAX_TURNS),
    },
    resume: { type: 'string', value: 'ID', description: 'continue a stored session (id, unique prefix, or "last")' },
    fork: { type: 'boolean', description: 'continue a stored rollout: give RUN KEY [TURN] as arguments' },
    checkpoints: {
      type: 'string',
      value: 'DIR',
      description: 'folder of run stores for --fork and /fork',
      default: 'checkpoints',
    },
    config: {
      type: 'string',
      value: 'FILE',
      description:
        'a run config YAML over TRAJ_HOME/config.yaml (endpoint, budget, compression, mcp_servers, the tool sections web, auxiliary, browser, delegation, code_execution, terminal, clarify, toolsets, system_prompt, …); flags win',
    },
    plain: { type: 'boolean', description: 'no colours, prompts or line editing even on a terminal' },
    'scripted-if-unset': {
      type: 'boolean',
      description: 'with no endpoint configured, use the built-in scripted endpoint',
    },
    ...ENDPOINT_OPTIONS,
  },
  details: `Examples:
  traj chat --toolsets terminal,file
  traj chat --resume last
  traj chat --fork demo 3f2a9c01 2          # run store checkpoints/demo.sqlite, item 3f2a9c01…, after assistant turn 2
  printf 'list the files here\\n/usage\\n' | traj chat --scripted-if-unset
Piped input: one message or /command per line, plain output. A dangerous command's approval
question reads the next line: y/once, s/session, a/always (saved in TRAJ_HOME/config.yaml), anything else denies.
--fork KEY: the record's "id", or a unique prefix of it; KEY:SAMPLE for a sample other than 0.
Sessions live in TRAJ_HOME/sessions.sqlite (default ~/.traj); several chats may share it (each write waits
for the lock instead of failing). See traj sessions --help.
Memory (TRAJ_HOME/memories/), skills (TRAJ_HOME/skills/ and --skills DIR) and the session search
are the memory, skills and session_search toolsets. AGENTS.md and .traj.md from the working folder
(--workdir, else the current one) up to the repository root go into the system prompt.
Long sessions are compressed near the model's context window (endpoint.context_length, else /v1/models).`,
  async run({ values, positionals }) {
    const config = loadAgentConfig(stringOption(values, 'config'));
    const fork = values.fork === true ? forkFromArguments(positionals, stringOption(values, 'checkpoints')) : undefined;
    if (!fork && positionals.length > 0)
      throw new ConfigError(
        `traj chat: unexpected argument '${positionals[0]}' (messages are typed at the prompt; --fork takes RUN KEY [TURN])`,
        { code: 'cli_usage' },
      );
    if (fork && stringOption(values, 'resume'))
      throw new ConfigError('give either --resume or --fork, not both', { code: 'cli_usage' });
    const sandboxKind = stringOption(values, 'sandbox') ?? config.sandbox ?? fork?.sandbox.kind ?? 'local';
    if (sandboxKind !== 'local' && sandboxKind !== 'docker')
      throw new ConfigError(`--sandbox: expected local or docker, got '${sandboxKind}'`, { code: 'cli_usage' });
    const toolsets = listOption(values, 'toolsets') ?? config.toolsets ?? DEFAULT_TOOLSETS;
    const workdirFlag = stringOption(values, 'workdir');
    if (workdirFlag && sandboxKind !== 'local')
      throw new ConfigError('--workdir is for the local sandbox; a docker sandbox starts from its image', {
        code: 'cli_usage',
      });
    const hostFolder = workdirFlag ? resolve(workdirFlag) : undefined;
    const { endpoint, scripted } = await resolveEndpoint(values, config.endpoint, {
      scriptedIfUnset: values['scripted-if-unset'] === true,
      log: (line) => process.stderr.write(`${line}\n`),
    });
    if (sandboxKind === 'local') {
      // Once, before the first prompt: what local commands are not isolated from here.
      const warning = await localIsolationWarning(config.local);
      if (warning) process.stderr.write(`${warning}\n`);
    }
    const interactive = values.plain !== true && Boolean(process.stdin.isTTY && process.stdout.isTTY);
    try {
      return await runChat({
        settings: {
          ...agentSettingsFrom(config, endpoint),
          toolsets,
          systemPrompt: chatSystemPrompt(values, config),
          maxTurns: integerOption(values, 'max-turns') ?? config.max_turns ?? DEFAULT_MAX_TURNS,
        },
        sandbox: {
          kind: sandboxKind,
          image:
            stringOption(values, 'image') ??
            config.image ??
            (sandboxKind === fork?.sandbox.kind ? fork.sandbox.image : undefined),
          workdir: config.workdir,
          docker: config.docker,
          local: config.local,
          ...(hostFolder ? { hostFolder } : {}),
        },
        mcpServers: config.mcp_servers,
        checkpointsDir: stringOption(values, 'checkpoints') ?? 'checkpoints',
        knowledge: {
          skillFolders: stringOption(values, 'skills') ? [resolve(stringOption(values, 'skills')!)] : [],
          ...(values['no-context-files'] === true ? {} : { contextFrom: hostFolder ?? process.cwd() }),
        },
        resume: stringOption(values, 'resume'),
        fork,
        input: process.stdin,
        output: process.stdout,
        interactive,
        color: interactive && !process.env.NO_COLOR,
      });
    } finally {
      await scripted?.close();
    }
  },
};

/** --system FILE wins over the config's system_prompt / system. */
function chatSystemPrompt(values: ParsedCommand['values'], config: AgentConfig): string | undefined {
  const file = stringOption(values, 'system');
  return systemPromptFrom(file ? { system: file } : config);
}

function forkFromArguments(positionals: string[], checkpointsDir: string | undefined): ForkedConversation {
  const [run, key, turn, ...extra] = positionals;
  if (!run || !key || extra.length > 0)
    throw new ConfigError('--fork takes RUN KEY [TURN], e.g. traj chat --fork demo 3f2a9c01 2', { code: 'cli_usage' });
  return loadFork({ run, key, turn: parseTurn(turn), checkpointsDir });
}
