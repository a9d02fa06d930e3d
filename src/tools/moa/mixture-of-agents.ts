import { z } from 'zod';
import type { Endpoint } from '../../config/endpoint.js';
import { errorMessage } from '../../errors.js';
import { defineTool } from '../tool.js';
import { ToolFailure } from '../tool-failure.js';
import type { ToolServices } from '../services.js';

export const MixtureOfAgentsParameters = z.object({
  user_prompt: z
    .string()
    .describe(
      'The complex query or problem to solve using multiple AI models. Should be a challenging problem that benefits from diverse perspectives and collaborative reasoning.',
    ),
});

export const AGGREGATOR_PROMPT =
  'You are given answers from several models to the question below. Some may be wrong or incomplete. ' +
  'Judge them critically and write one answer that is more accurate and complete than any of them. ' +
  'Do not mention the models or that you were given answers.';

export const mixtureOfAgentsTool = defineTool({
  name: 'mixture_of_agents',
  toolset: 'moa',
  version: '2',
  // Hermes' words, as hermes-agent sends them (tests/fixtures/hermes/tool-schemas.json).
  description:
    'Route a hard problem through multiple frontier LLMs collaboratively. Makes 5 API calls (4 reference models + 1 aggregator) with maximum reasoning effort — use sparingly for genuinely difficult problems. Best for: complex math, advanced algorithms, multi-step analytical reasoning, problems benefiting from diverse perspectives.',
  parameters: MixtureOfAgentsParameters,
  available: ({ services }) =>
    services?.auxiliary.moa ? true : 'auxiliary.moa (reference models and an aggregator) is not configured',
  run: async ({ user_prompt: prompt }, { services, signal }) => {
    if (prompt.trim() === '') throw new ToolFailure('user_prompt is empty', 'state the problem completely');
    const moa = services?.auxiliary.moa;
    if (!services || !moa) throw new ToolFailure('auxiliary.moa is not configured');
    const settled = await Promise.allSettled(
      moa.reference.map((endpoint) => ask(services, endpoint, [{ role: 'user', content: prompt }], signal)),
    );
    if (signal.aborted) throw new Error('interrupted');
    const answers = settled.flatMap((outcome, index) =>
      outcome.status === 'fulfilled' && outcome.value
        ? [{ model: moa.reference[index]!.model, answer: outcome.value }]
        : [],
    );
    const failures = settled.flatMap((outcome, index) =>
      outcome.status === 'rejected' ? [`${moa.reference[index]!.model}: ${errorMessage(outcome.reason)}`] : [],
    );
    if (answers.length === 0)
      throw new ToolFailure(
        `every reference model failed: ${failures.join('; ') || 'empty answers'}`,
        'try again later or answer without mixture_of_agents',
      );
    const numbered = answers.map((entry, index) => `${index + 1}. ${entry.answer}`).join('\n\n');
    const combined = await ask(
      services,
      moa.aggregator,
      [
        { role: 'system', content: `${AGGREGATOR_PROMPT}\n\nAnswers:\n${numbered}` },
        { role: 'user', content: prompt },
      ],
      signal,
    );
    if (!combined) throw new ToolFailure(`the aggregator (${moa.aggregator.model}) gave an empty answer`);
    return {
      answer: combined,
      reference_models: answers.map((entry) => entry.model),
      aggregator: moa.aggregator.model,
      ...(failures.length ? { failed: failures } : {}),
    };
  },
});

/** One inner call through the thread's client for that endpoint (its retries and limits); usage goes to the rollout. */
async function ask(
  services: ToolServices,
  endpoint: Endpoint,
  messages: Parameters<ReturnType<ToolServices['model']>['complete']>[0]['messages'],
  signal: AbortSignal,
): Promise<string> {
  const response = await services.model(endpoint).complete({ messages, signal });
  services.reportUsage?.(response.usage);
  return response.message.content?.trim() ?? '';
}
