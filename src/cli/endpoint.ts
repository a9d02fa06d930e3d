import {
  EndpointSchema,
  endpointFromEnvironment,
  isEndpointConfigured,
  type Endpoint,
  type EndpointInput,
} from '../config/endpoint.js';
import { validate } from '../config/load.js';
import { ConfigError } from '../errors.js';
import { stringOption, type ParsedCommand } from './command.js';

export interface ResolvedEndpoint {
  endpoint: Endpoint;
  /** Set when the built-in scripted endpoint was started because none is configured. */
  scripted?: { close(): Promise<void> };
  /** What identifies the endpoint in a run's fingerprint (the scripted one's port changes every start). */
  identity: string;
}

/**
 * The endpoint from flags, then the run config, then the environment. With `scriptedIfUnset`,
 * no configured endpoint means the built-in scripted one (what `npm start` uses), said plainly.
 */
export async function resolveEndpoint(
  values: ParsedCommand['values'],
  fromConfig: Partial<EndpointInput> | undefined,
  options: { scriptedIfUnset?: boolean; log?: (line: string) => void } = {},
): Promise<ResolvedEndpoint> {
  const flags = {
    baseUrl: stringOption(values, 'base-url'),
    model: stringOption(values, 'model'),
    apiKeyEnv: stringOption(values, 'api-key-env'),
  };
  const format = stringOption(values, 'tool-call-format');
  const configured = isEndpointConfigured(flags) || Boolean(fromConfig?.base_url);
  if (!configured && options.scriptedIfUnset) {
    const { startScriptedServer, echoScript } = await import('../testing/index.js');
    const server = await startScriptedServer(echoScript, { record: false });
    options.log?.(
      `No model endpoint is configured (OPENAI_BASE_URL / OPENAI_API_KEY / OPENROUTER_API_KEY / --base-url), so this run uses traj's built-in SCRIPTED endpoint at ${server.url}: its answers are canned, not a real model.`,
    );
    const endpoint = validate(
      EndpointSchema,
      { ...fromConfig, base_url: server.url, model: 'traj-scripted', api_key_env: 'TRAJ_SCRIPTED_KEY' },
      'endpoint',
    );
    return { endpoint, scripted: server, identity: 'traj-scripted (built in)' };
  }
  const merged: Partial<EndpointInput> = { ...fromConfig, ...stripUndefined(endpointFromEnvironment(flags)) };
  if (fromConfig?.base_url && !flags.baseUrl) merged.base_url = fromConfig.base_url;
  if (fromConfig?.model && !flags.model) merged.model = fromConfig.model;
  if (format) merged.tool_call_format = format as Endpoint['tool_call_format'];
  if (!merged.base_url) {
    throw new ConfigError(
      'no model endpoint configured: pass --base-url URL (and --api-key-env VAR), or set OPENAI_BASE_URL + OPENAI_API_KEY, or OPENROUTER_API_KEY',
      {
        code: 'endpoint_missing',
      },
    );
  }
  if (!merged.model)
    throw new ConfigError('no model named: pass --model NAME or set TRAJ_MODEL', { code: 'model_missing' });
  const endpoint = validate(EndpointSchema, merged, 'endpoint (flags, config and environment)');
  return { endpoint, identity: endpoint.base_url };
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, item]) => item !== undefined)) as Partial<T>;
}
