import { DEFAULT_BUDGET } from '../tools/budget.js';
import { executeRollout } from '../run/rollout.js';
import { createThreadServices } from '../run/worker-services.js';
import { ConfigError } from '../errors.js';
import { ENDPOINT_OPTIONS, integerOption, listOption, stringOption, type CommandDefinition } from './command.js';
import { resolveEndpoint } from './endpoint.js';
import { exitCodeFor } from './exit-codes.js';
import { renderConversation } from './render-conversation.js';
import { createToolRegistry } from '../tools/builtin.js';
import { readFileSync } from 'node:fs';
import { resolveAuxiliary } from '../config/auxiliary.js';
import { loadToolConfig } from '../config/tool-config.js';
import { availabilityContext } from '../run/batch.js';

export const command: CommandDefinition = {
  name: 'ask',
  summary: 'run one prompt through the agent and print the conversation',
  usage: 'traj ask "PROMPT" [--toolsets terminal,file] [--sandbox local|docker] [--max-turns N] [--json]',
  allowPositionals: true,
  options: {
    toolsets: { type: 'string', value: 'a,b', description: 'toolsets to offer', default: 'terminal,file' },
    sandbox: { type: 'string', value: 'local|docker', description: 'where tool commands run', default: 'local' },
    image: { type: 'string', value: 'IMAGE', description: 'docker image for --sandbox docker' },
    'max-turns': { type: 'string', value: 'N', description: 'model calls before the final-answer call', default: '10' },
    system: { type: 'string', value: 'FILE', description: 'file holding the system prompt' },
    json: { type: 'boolean', description: 'print the AgentResult as JSON instead of a transcript' },
    config: { type: 'string', value: 'FILE', description: 'a config whose web:, auxiliary: and browser: apply (over TRAJ_HOME/config.yaml)' },
    'scripted-if-unset': { type: 'boolean', description: 'with no endpoint configured, use the built-in scripted endpoint' },
    ...ENDPOINT_OPTIONS,
  },
  details: `Examples:
  traj ask "How many files are in /etc? Use the terminal." --toolsets terminal
  traj ask "Summarise README.md" --toolsets file --json`,
  async run({ values, positionals }) {
    const prompt = positionals.join(' ').trim();
    if (!prompt) throw new ConfigError('traj ask: give the prompt as an argument, e.g. traj ask "list the files here"', { code: 'cli_usage' });
    const toolsets = listOption(values, 'toolsets') ?? ['terminal', 'file'];
    createToolRegistry().assertToolsets(toolsets, '--toolsets');
    const sandbox = stringOption(values, 'sandbox') ?? 'local';
    if (sandbox !== 'local' && sandbox !== 'docker') throw new ConfigError(`--sandbox: expected local or docker, got '${sandbox}'`, { code: 'cli_usage' });
    const systemFile = stringOption(values, 'system');
    const { endpoint, scripted } = await resolveEndpoint(values, undefined, {
      scriptedIfUnset: values['scripted-if-unset'] === true,
      log: (line) => process.stderr.write(`${line}\n`),
    });
    const toolConfig = loadToolConfig(stringOption(values, 'config'));
    const toolSettings = { web: toolConfig.web, auxiliary: resolveAuxiliary(toolConfig.auxiliary, endpoint), browser: toolConfig.browser };
    const registry = createToolRegistry();
    for (const tool of registry.unavailableTools(toolsets, availabilityContext({ endpoint, ...toolSettings }))) {
      process.stderr.write(`[traj] warning: ${tool.name} [${tool.toolset}] is not offered: ${tool.reason}\n`);
    }
    const services = createThreadServices();
    try {
      const controller = new AbortController();
      process.once('SIGINT', () => controller.abort(new Error('interrupted')));
      const outcome = await executeRollout(
        {
          key: 'ask',
          sample: 0,
          toolsets,
          messages: [{ role: 'user', content: prompt }],
          system: systemFile ? readFileSync(systemFile, 'utf8') : undefined,
          settings: {
            run: 'ask',
            endpoint,
            maxTurns: integerOption(values, 'max-turns') ?? 10,
            sandbox: { kind: sandbox, image: stringOption(values, 'image') },
            budget: DEFAULT_BUDGET,
            agent: 'model',
            toolConcurrency: 8,
            ...toolSettings,
          },
        },
        services,
        controller.signal,
      );
      if (values.json) process.stdout.write(`${JSON.stringify({ ...outcome.result, error: outcome.error ?? outcome.result.error }, null, 2)}\n`);
      else {
        process.stdout.write(`${renderConversation(outcome.result.messages)}\n`);
        process.stdout.write(`\n[finish: ${outcome.result.finishReason}, ${outcome.result.turns} turns, ${outcome.result.toolCalls.length} tool calls, ${outcome.result.usage.prompt_tokens + outcome.result.usage.completion_tokens} tokens]\n`);
      }
      const error = outcome.error ?? outcome.result.error;
      if (error) {
        process.stderr.write(`traj: ${error.message}\n`);
        return exitCodeFor(error);
      }
      return 0;
    } finally {
      await services.close();
      await scripted?.close();
    }
  },
};
