import { resolveAuxiliary, type AuxiliaryModels } from '../config/auxiliary.js';
import type { Endpoint } from '../config/endpoint.js';
import { DEFAULT_WEB_CONFIG, type WebConfig } from '../config/web.js';
import type { ToolRegistry } from '../tools/registry.js';
import { toolSpec } from '../tools/tool-spec.js';
import { canonicalJson, sha256 } from '../util/hash.js';
import { candidateToolsets, type ToolsetChoice } from './batch.js';
import type { RolloutSettings } from './rollout.js';
import { knowledgeFingerprint } from './rollout-knowledge.js';
import type { RunConfig } from './run-config.js';

/**
 * The run fingerprint: the settings whose change makes a resumed run a different run (DESIGN.md
 * "The run store"). A store remembers its parts; a rerun with other parts is refused unless forced.
 */

export interface FingerprintInput {
  endpoint: Endpoint;
  /** The endpoint's stable identity (its base URL, or a name for the built-in scripted one). */
  endpointIdentity: string;
  choice: ToolsetChoice;
  registry: ToolRegistry;
  maxTurns: number;
  systemPrompt: string | undefined;
  seed: number;
  environment: { name: string; version: string };
  agent: string;
  sandbox: { kind: string; image?: string };
  /** Memory, skills and compression settings (see knowledgeFingerprint); absent when none is set. */
  knowledge?: Record<string, unknown>;
  /** Run-time prompt material: part of the fingerprint when set, though records do not hold it. */
  runTime?: { ephemeralSystemPrompt?: string; prefill?: unknown[] };
  /** Web settings and auxiliary models: part of the fingerprint when a candidate toolset uses them. */
  tools?: { web?: WebConfig; auxiliary?: AuxiliaryModels };
  /** The policy's tokenizer (`tokenizer:`): it changes compression points and the token data recorded. */
  tokenizer?: string;
}

/** The settings whose change makes a resumed run a different run (DESIGN.md "The run store"). */
export function fingerprintParts(input: FingerprintInput): Record<string, unknown> {
  const candidates = new Set(candidateToolsets(input.choice));
  const schemas = input.registry.toolsOf([...candidates]).map(toolSpec);
  return {
    model: input.endpoint.model,
    base_url: input.endpointIdentity,
    tool_call_format: input.endpoint.tool_call_format,
    // What is echoed back changes every later request; the default stays out so older stores resume.
    ...(input.endpoint.reasoning_echo && input.endpoint.reasoning_echo !== 'auto'
      ? { reasoning_echo: input.endpoint.reasoning_echo }
      : {}),
    sampling: {
      temperature: input.endpoint.temperature ?? null,
      top_p: input.endpoint.top_p ?? null,
      max_tokens: input.endpoint.max_tokens ?? null,
      seed: input.endpoint.seed ?? null,
      extra_body: input.endpoint.extra_body ?? null,
    },
    toolsets:
      'distribution' in input.choice
        ? { distribution: input.choice.distribution.name, probabilities: input.choice.distribution.toolsets }
        : { fixed: input.choice.toolsets },
    environment: input.environment,
    max_turns: input.maxTurns,
    system_prompt: input.systemPrompt ?? null,
    // Only when set, so stores written before these options resume with the fingerprint they have.
    ...(input.runTime?.ephemeralSystemPrompt ? { ephemeral_system_prompt: input.runTime.ephemeralSystemPrompt } : {}),
    ...(input.runTime?.prefill?.length ? { prefill: sha256(canonicalJson(input.runTime.prefill)).slice(0, 16) } : {}),
    seed: input.seed,
    agent: input.agent,
    sandbox: input.sandbox,
    tool_schemas: sha256(canonicalJson(schemas)).slice(0, 16),
    ...toolServiceParts(
      candidates,
      input.tools,
      { baseUrl: input.endpoint.base_url, identity: input.endpointIdentity },
      compressionEnabled(input.knowledge),
    ),
    ...(input.knowledge ? { knowledge: input.knowledge } : {}),
    // Only when set, so stores written before `tokenizer:` existed resume with their fingerprint.
    ...(input.tokenizer ? { tokenizer: input.tokenizer } : {}),
  };
}

/**
 * The auxiliary models (and web settings) the candidate toolsets and compression use. Runs without
 * them keep the fingerprint they always had.
 */
function toolServiceParts(
  candidates: Set<string>,
  tools: FingerprintInput['tools'],
  main: { baseUrl: string; identity: string },
  compressing: boolean,
): Record<string, unknown> {
  const parts: Record<string, unknown> = {};
  // An auxiliary model on the main endpoint (vision defaults to it) takes the endpoint's stable
  // identity: the built-in scripted endpoint has a new port on every run.
  const baseUrl = (url: string) => (url === main.baseUrl ? main.identity : url);
  const model = (endpoint: Endpoint | undefined) =>
    endpoint && {
      model: endpoint.model,
      base_url: baseUrl(endpoint.base_url),
      temperature: endpoint.temperature ?? null,
      max_tokens: endpoint.max_tokens ?? null,
      extra_body: endpoint.extra_body ?? null,
    };
  const auxiliary = tools?.auxiliary;
  const used: Record<string, unknown> = {};
  if (candidates.has('vision')) used.vision = model(auxiliary?.vision) ?? null;
  // web_extract summarises long pages with it; compression summarises the conversation with it.
  if (candidates.has('web') || (compressing && auxiliary?.summarizer))
    used.summarizer = model(auxiliary?.summarizer) ?? null;
  if (candidates.has('image_gen')) used.image = model(auxiliary?.image) ?? null;
  if (candidates.has('moa'))
    used.moa = auxiliary?.moa
      ? { reference: auxiliary.moa.reference.map(model), aggregator: model(auxiliary.moa.aggregator) }
      : null;
  if (Object.keys(used).length > 0) parts.auxiliary = used;
  if (candidates.has('web') || candidates.has('browser')) parts.web = tools?.web ?? DEFAULT_WEB_CONFIG;
  return parts;
}

/** Compression is on unless the run config turns it off (knowledgeFingerprint keeps its settings). */
function compressionEnabled(knowledge: Record<string, unknown> | undefined): boolean {
  const compression = knowledge?.compression as { enabled?: boolean } | null | undefined;
  return compression?.enabled !== false;
}

/** A run's fingerprint parts from its run config and rollout settings: what batch and eval runs share. */
export function runFingerprintParts(
  config: RunConfig,
  settings: RolloutSettings,
  run: {
    endpointIdentity: string;
    choice: ToolsetChoice;
    registry: ToolRegistry;
    environment: { name: string; version: string };
    agent: string;
  },
): Record<string, unknown> {
  return fingerprintParts({
    ...run,
    endpoint: settings.endpoint,
    maxTurns: config.max_turns,
    systemPrompt: settings.systemPrompt,
    runTime: settings,
    seed: config.seed,
    sandbox: { kind: config.sandbox, image: config.image },
    knowledge: knowledgeFingerprint(settings),
    tools: { web: settings.tools.web, auxiliary: resolveAuxiliary(settings.tools.auxiliary, settings.endpoint) },
    ...(settings.tokenizer ? { tokenizer: settings.tokenizer } : {}),
  });
}
