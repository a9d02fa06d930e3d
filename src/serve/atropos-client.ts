import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigError, errorMessage } from '../errors.js';
import type { ServedGroupRow } from '../run/served-groups.js';
import {
  AtroposEnvStatusSchema,
  AtroposRegisteredSchema,
  AtroposRegisterEnvSchema,
  AtroposScoredDataSchema,
  type AtroposScoredData,
} from './atropos-models.js';
import type { ScoredGroup } from './scored-group.js';
import type { Serving } from './serving.js';

export interface AtroposOptions {
  /** The Atropos API server, e.g. http://127.0.0.1:8000 */
  url: string;
  /** desired_name: Atropos numbers environments of one name (`name_0`, `name_1`). */
  name: string;
  groupSize: number;
  maxTokenLength: number;
  weight: number;
  /** Post while Atropos' queue holds fewer of this environment's groups than this. */
  maxQueued: number;
  stop: AbortSignal;
  pollMs?: number;
  onNotice?: (line: string) => void;
}

/**
 * traj as an Atropos environment: register (POST /register-env, again each second while the
 * trainer has not started), then post each ready group as `ScoredData` (POST /scored_data),
 * pausing while Atropos' queue for it is full (GET /status-env), and POST /disconnect-env at the
 * end. A group is marked delivered once Atropos accepted it: a kill between the two posts it again.
 */
export async function runAtroposPusher(serving: Serving, options: AtroposOptions): Promise<void> {
  const envId = await register(options);
  if (envId === undefined) return;
  options.onNotice?.(`registered with Atropos at ${options.url} as env ${envId}`);
  try {
    while (!options.stop.aborted) {
      if (!(await hasRoom(options, envId))) {
        await pause(options);
        continue;
      }
      const row = await serving.nextReady();
      if (!row || options.stop.aborted) break;
      const accepted = await post(options, scoredData(row, envId));
      serving.delivered(row.seq, accepted ? `atropos:${envId}` : 'atropos:rejected');
    }
  } finally {
    await jsonRequest('POST', `${options.url}/disconnect-env`, { env_id: envId }).catch(() => undefined);
  }
}

async function register(options: AtroposOptions): Promise<number | undefined> {
  const body = AtroposRegisterEnvSchema.parse({
    max_token_length: options.maxTokenLength,
    desired_name: options.name,
    weight: options.weight,
    group_size: options.groupSize,
    min_batch_allocation: null,
  });
  let said = false;
  while (!options.stop.aborted) {
    const answer = await jsonRequest('POST', `${options.url}/register-env`, body).catch((error: unknown) => {
      options.onNotice?.(`Atropos at ${options.url}: ${errorMessage(error)}; trying again`);
      return undefined;
    });
    const parsed = AtroposRegisteredSchema.safeParse(answer?.body);
    if (parsed.success && parsed.data.status === 'success' && parsed.data.env_id !== undefined)
      return parsed.data.env_id;
    if (parsed.success && !said) {
      options.onNotice?.(`Atropos says "${parsed.data.status}": waiting for the trainer`);
      said = true;
    }
    await pause(options);
  }
  return undefined;
}

async function hasRoom(options: AtroposOptions, envId: number): Promise<boolean> {
  const answer = await jsonRequest('GET', `${options.url}/status-env`, { env_id: envId }).catch(() => undefined);
  const parsed = AtroposEnvStatusSchema.safeParse(answer?.body);
  return parsed.success && parsed.data.queue_size < options.maxQueued;
}

/** Posts one group; retried on network errors and 5xx, as Atropos' own environments do. False on a 4xx. */
async function post(options: AtroposOptions, data: AtroposScoredData): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    const answer = await jsonRequest('POST', `${options.url}/scored_data`, data).catch((error: unknown) => ({
      status: 0,
      body: errorMessage(error),
    }));
    if (answer.status >= 200 && answer.status < 300) return true;
    if (answer.status >= 400 && answer.status < 500) {
      options.onNotice?.(`Atropos refused a group (HTTP ${answer.status}): ${JSON.stringify(answer.body)}`);
      return false;
    }
    if (options.stop.aborted) throw new ConfigError('stopped while posting to Atropos', { code: 'aborted' });
    await sleep(Math.min(10_000, 250 * 2 ** attempt));
  }
}

/** A served group in Atropos' ScoredData shape; the policy version rides in generation_params. */
export function scoredData(row: ServedGroupRow, envId: number | null): AtroposScoredData {
  const group = JSON.parse(row.payload!) as ScoredGroup;
  return AtroposScoredDataSchema.parse({
    tokens: group.tokens,
    masks: group.masks,
    scores: group.scores,
    advantages: null,
    ref_logprobs: group.logprobs,
    messages: group.messages.map((messages) =>
      messages.map((message) => ({ ...message, content: message.content ?? '' })),
    ),
    generation_params: { policy_version: group.policy_version, model: group.policy.model, traj_group: group.group },
    inference_logprobs: group.logprobs,
    overrides: null,
    group_overrides: null,
    images: null,
    env_id: envId,
  });
}

function pause(options: AtroposOptions): Promise<void> {
  return sleep(options.pollMs ?? 1000, undefined, { signal: options.stop }).catch(() => undefined);
}

/** JSON over HTTP with a body on any method: Atropos' GET /status-env reads its body, which fetch cannot send. */
function jsonRequest(method: string, url: string, body: unknown): Promise<{ status: number; body: unknown }> {
  const text = JSON.stringify(body);
  const send = url.startsWith('https:') ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const request = send(
      url,
      { method, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) } },
      (response) => {
        let answer = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (answer += chunk));
        response.on('end', () => {
          let parsed: unknown = answer;
          try {
            parsed = JSON.parse(answer);
          } catch {}
          resolve({ status: response.statusCode ?? 0, body: parsed });
        });
      },
    );
    request.setTimeout(60_000, () => request.destroy(new Error(`no answer from ${url} in 60 s`)));
    request.on('error', reject);
    request.end(text);
  });
}
