import { z } from 'zod';
import { DEFAULT_CLARIFY_ANSWER } from '../config/clarify.js';
import { defineTool } from './tool.js';
import { ToolFailure } from './tool-failure.js';

/** Asks the person and resolves to their answer; chat puts one in ToolContext.state under this key. */
export type ClarifyAsker = (
  question: string,
  choices: readonly string[] | undefined,
  signal: AbortSignal,
) => Promise<string>;
export const CLARIFY_STATE_KEY = 'clarify';

export const ClarifyParameters = z.object({
  question: z
    .string()
    .describe(
      "The question itself, and ONLY the question (e.g. 'Which deployment target?'). Do NOT embed the answer options here — pass them as separate elements in `choices`.",
    ),
  choices: z
    .array(z.string())
    .max(4)
    .optional()
    .describe(
      "REQUIRED whenever you are presenting selectable options: each distinct option is its own array element (up to 4). The UI renders these as pickable rows and auto-appends an 'Other (type your answer)' option. Omit this parameter entirely ONLY for a genuinely open-ended free-text question.",
    ),
});

export const clarifyTool = defineTool({
  name: 'clarify',
  toolset: 'clarify',
  version: '1',
  // Hermes' words, as hermes-agent sends them (tests/fixtures/hermes/tool-schemas.json).
  description:
    "Ask the user a question when you need clarification, feedback, or a decision before proceeding. Supports two modes:\n\n1. **Multiple choice** — provide up to 4 choices. The user picks one or types their own answer via a 5th 'Other' option.\n2. **Open-ended** — omit choices entirely. The user types a free-form response.\n\nCRITICAL: when you are offering options, put each option ONLY in the `choices` array — NEVER enumerate the options inside the `question` text. The UI renders `choices` as selectable rows; options written into the question string render as dead prose the user can't pick. Right: question='Which deployment target?', choices=['staging', 'prod']. Wrong: question='Which target? 1) staging 2) prod', choices=[].\n\nUse this tool when:\n- The task is ambiguous and you need the user to choose an approach\n- You want post-task feedback ('How did that work out?')\n- You want to offer to save a skill or update memory\n- A decision has meaningful trade-offs the user should weigh in on\n\nDo NOT use this tool for simple yes/no confirmation of dangerous commands (the terminal tool handles that). Prefer making a reasonable default choice yourself when the decision is low-stakes.",
  parameters: ClarifyParameters,
  run: async ({ question, choices }, { state, services, signal }) => {
    if (question.trim() === '') throw new ToolFailure('question is empty', 'ask one clear question');
    const ask = state.get(CLARIFY_STATE_KEY) as ClarifyAsker | undefined;
    if (typeof ask === 'function') {
      const answer = await ask(question, choices, signal);
      return { question, ...(choices ? { choices } : {}), user_response: answer };
    }
    // No person to ask (batch, eval, bench): the configured answer, recorded like any tool result.
    const answer = services?.settings.clarify.answer ?? DEFAULT_CLARIFY_ANSWER;
    return { question, ...(choices ? { choices } : {}), user_response: answer, answered_by: 'harness' };
  },
});
