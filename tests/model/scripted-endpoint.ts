import type { EndpointInput } from '../../src/config/endpoint.js';
import type { Message } from '../../src/model/messages.js';
import type { ModelClientOptions } from '../../src/model/client.js';
import {
  startScriptedServer,
  type Script,
  type ScriptedServer,
  type ScriptedServerOptions,
} from '../../src/testing/index.js';

/** Shared set-up for the model tests: a scripted server per test, a client pointed at it. */
export async function withServer<T>(
  script: Script,
  run: (server: ScriptedServer) => Promise<T>,
  options?: ScriptedServerOptions,
): Promise<T> {
  const server = await startScriptedServer(script, options);
  try {
    return await run(server);
  } finally {
    await server.close();
  }
}

export function endpointFor(server: ScriptedServer, overrides: Partial<EndpointInput> = {}): EndpointInput {
  return { base_url: server.url, model: 'scripted-test-model', max_retries: 3, timeout_ms: 5_000, ...overrides };
}

/** Millisecond backoff so retry tests stay fast; an empty env proves local endpoints need no key. */
export const FAST: ModelClientOptions = { retry: { baseDelayMs: 5, maxDelayMs: 40 }, env: {} };

export const HELLO: Message[] = [{ role: 'user', content: 'hello' }];
