import { z } from 'zod';
import type { Endpoint } from '../../config/endpoint.js';
import { errorMessage } from '../../errors.js';
import { defineTool, ToolFailure } from '../registry.js';
import type { ToolServices } from '../services.js';

export const MixtureOfAgentsParameters = z.object({
  prompt: z
    .string()
    .min(1)
    .describe('The hard question or reasoning step, stated completely: the models see nothing else.'),
});

export const AGGREGATOR_PROMPT =
  'You are given answers from several models to the question below. Some may be wrong or incomplete. ' +
  'Judge them critically and write one answer that is more accurate and complete than any of them. ' +
  'Do not mention the models or that you were given answers.';

export const mixtureOfAgentsTool = defineTool({
  name: 'mixture_of_agents',
  toolset: 'moa',
  version: '1',
  description:
    'Ask several strong models the same question in parallel and get one answer combined from theirs. ' +
    'Use it for hard reasoning, math or design questions; state the question completely.',
  parameters: MixtureOfAgentsParameters,
  available: ({ services }) =>
    services?.auxiliary.moa ? true : 'auxiliary.moa (reference models and an aggregator) is not configured',
  run: async ({ prompt }, { services, signal }) => {
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
