import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { CommandApprover, guardTerminal, loadApprovedCommands } from '../chat/index.js';
import { ConfigError } from '../errors.js';
import { localIsolationWarning } from '../sandbox/local.js';
import { type AgentConfig, loadAgentConfig } from '../run/load-run-config.js';
import type { RolloutServices, RolloutSettings } from '../run/rollout.js';
import { agentSettingsFrom } from '../run/run-setup.js';
import { runSingleRollout } from '../run/single-rollout.js';
import { builtinRegistry } from '../tools/builtin.js';
import { ToolRegistry } from '../tools/registry.js';
import {
  ENDPOINT_OPTIONS,
  integerOption,
  listOption,
  stringOption,
  type CommandDefinition,
  type ParsedCommand,
} from './command.js';
import { resolveEndpoint } from './endpoint.js';
import { exitCodeFor } from './exit-codes.js';
import { renderConversation } from './render-conversation.js';

export const command: CommandDefinition = {
  name: 'ask',
  summary: 'run one prompt through the agent and print the conversation',
  usage:
    'traj ask "PROMPT" [--toolsets terminal,file] [--workdir DIR | --scratch] [--sandbox local|docker] [--max-turns N] [--json]',
  allowPositionals: true,
  options: {
    toolsets: { type: 'string', value: 'a,b', description: 'toolsets to offer', default: 'terminal,file' },
    sandbox: { type: 'string', value: 'local|docker', description: 'where tool commands run', default: 'local' },
    image: { type: 'string', value: 'IMAGE', description: 'docker image for --sandbox docker' },
    workdir: {
      type: 'string',
      value: 'DIR',
      description: 'local sandbox: the existing folder to work in (default: the current folder)',
    },
    scratch: {
      type: 'boolean',
      description: 'local sandbox: a fresh empty temporary folder instead of the current one',
    },
    'max-turns': {
      type: 'string',
      value: 'N',
      description: "model calls before the final-answer call (default: the config's max_turns, else 10)",
    },
    system: { type: 'string', value: 'FILE', description: 'file holding the system prompt' },
    json: { type: 'boolean', description: 'print the AgentResult as JSON instead of a transcript' },
    config: {
      type: 'string',
      value: 'FILE',
      description:
        'a run config whose agent settings apply, over TRAJ_HOME/config.yaml: tool sections (web, terminal, …), compression, system prompt, max_turns, budget, and the sandbox (sandbox, image, workdir, docker:, local:)',
    },
    'scripted-if-unset': {
      type: 'boolean',
      description: 'with no endpoint configured, use the built-in scripted endpoint',
    },
    ...ENDPOINT_OPTIONS,
  },
  details: `Examples:
  traj ask "How many files are in /etc? Use the terminal." --toolsets terminal
  traj ask "Summarise README.md" --toolsets file --json
  traj ask "Which tests cover the parser?" --workdir ~/src/project --toolsets file,terminal
With the local sandbox the agent works in the current folder (or --workdir DIR): files it writes
stay there. Dangerous commands (rm -rf, git reset --hard, …) are refused unless approved
"always" in a chat (TRAJ_HOME/config.yaml). --scratch gives it an empty temporary folder instead.`,
  async run({ values, positionals }) {
    const prompt = positionals.join(' ').trim();
    if (!prompt)
      throw new ConfigError('traj ask: give the prompt as an argument, e.g. traj ask "list the files here"', {
        code: 'cli_usage',
      });
    const toolsets = listOption(values, 'toolsets') ?? ['terminal', 'file'];
    builtinRegistry().assertToolsets(toolsets, '--toolsets');
    const config = loadAgentConfig(stringOption(values, 'config'));
    const sandbox = stringOption(values, 'sandbox') ?? config.sandbox ?? 'local';
    if (sandbox !== 'local' && sandbox !== 'docker')
      throw new ConfigError(`--sandbox: expected local or docker, got '${sandbox}'`, { code: 'cli_usage' });
    const systemFile = stringOption(values, 'system');
    if (values.scratch === true && stringOption(values, 'workdir'))
      throw new ConfigError('give either --workdir DIR or --scratch, not both', { code: 'cli_usage' });
    if (sandbox === 'docker' && stringOption(values, 'workdir'))
      throw new ConfigError('--workdir is for the local sandbox; a docker sandbox starts from its image', {
        code: 'cli_usage',
      });
    const hostFolder =
      sandbox === 'local' && values.scratch !== true ? resolve(stringOption(values, 'workdir') ?? '.') : undefined;
    // Before any model call: the sandbox is made lazily, at the first tool call.
    if (hostFolder && !statSync(hostFolder, { throwIfNoEntry: false })?.isDirectory())
      throw new ConfigError(`--workdir ${hostFolder}: no such folder (give an existing directory to work in)`, {
        code: 'cli_usage',
      });
    const { endpoint, scripted } = await resolveEndpoint(values, config.endpoint, {
      scriptedIfUnset: values['scripted-if-unset'] === true,
      log: (line) => process.stderr.write(`${line}\n`),
    });
    try {
      const controller = new AbortController();
      process.once('SIGINT', () => controller.abort(new Error('interrupted')));
      const settings = agentSettingsFrom(config, endpoint);
      const outcome = await runSingleRollout({
        prompt,
        toolsets,
        settings: {
          ...settings,
          maxTurns: integerOption(values, 'max-turns') ?? settings.maxTurns,
          ...(systemFile ? { systemPrompt: readFileSync(systemFile, 'utf8') } : {}),
        },
        sandbox: await askSandbox(values, config, sandbox, hostFolder),
        services: hostFolder ? guardedServices : undefined,
        onUnavailable: (tool) =>
          process.stderr.write(`[traj] warning: ${tool.name} [${tool.toolset}] is not offered: ${tool.reason}\n`),
        signal: controller.signal,
      });
      if (values.json)
        process.stdout.write(
          `${JSON.stringify({ ...outcome.result, error: outcome.error ?? outcome.result.error }, null, 2)}\n`,
        );
      else {
        process.stdout.write(`${renderConversation(outcome.result.messages)}\n`);
        process.stdout.write(
          `\n[finish: ${outcome.result.finishReason}, ${outcome.result.turns} turns, ${outcome.result.toolCalls.length} tool calls, ${outcome.result.usage.prompt_tokens + outcome.result.usage.completion_tokens} tokens]\n`,
        );
      }
      const error = outcome.error ?? outcome.result.error;
      if (error) {
        process.stderr.write(`traj: ${error.message}\n`);
        return exitCodeFor(error);
      }
      return 0;
    } finally {
      await scripted?.close();
    }
  },
};

/**
 * The rollout's sandbox as chat builds it: the flags over the config's `sandbox`, `image`,
 * `workdir`, `docker:` and `local:`. A local one first says what is not isolated here (and
 * `isolation: bwrap` without a usable bubblewrap is an error before any model call).
 */
async function askSandbox(
  values: ParsedCommand['values'],
  config: AgentConfig,
  kind: 'local' | 'docker',
  hostFolder: string | undefined,
): Promise<RolloutSettings['sandbox']> {
  if (kind === 'local') {
    const warning = await localIsolationWarning(config.local);
    if (warning) process.stderr.write(`${warning}\n`);
  }
  return {
    kind,
    image: stringOption(values, 'image') ?? config.image,
    workdir: config.workdir,
    docker: config.docker,
    local: config.local,
    ...(hostFolder ? { hostFolder } : {}),
  };
}

/**
 * On a real folder the terminal sits behind the chat's dangerous-command approver. ask cannot
 * ask, so what a chat has not approved "always" is refused, and the model reads why.
 */
function guardedServices(services: RolloutServices): RolloutServices {
  const approver = new CommandApprover(async () => 'deny', { ids: () => loadApprovedCommands(), add: () => undefined });
  return {
    ...services,
    async registry(settings, toolsets) {
      // The thread's registry honours terminal.persistent; only its terminal is swapped for the guard.
      const registry = await services.registry(settings, toolsets);
      const terminal = registry.get('terminal');
      if (!terminal) return registry;
      const guard = guardTerminal(approver, terminal);
      return new ToolRegistry().register(...registry.all().map((tool) => (tool.name === guard.name ? guard : tool)));
    },
  };
}
