import type { ClarifyAsker } from '../tools/clarify.js';
import type { LineInput } from './line-input.js';
import type { Output } from './renderer.js';
import type { Style } from './style.js';

export const CLARIFY_PROMPT = '  your answer: ';
/** What the model reads when the input ended before anyone answered. */
export const CLARIFY_NO_ANSWER = '(no answer: the input ended before the person replied)';

/**
 * clarify in chat asks the person on the chat's own input: the question, its numbered choices and
 * an "other" row, as Hermes shows them. Piped, the next input line is the answer; a choice's
 * number stands for that choice, anything else is taken as typed.
 */
export function clarifyPrompt(input: LineInput, output: Output, style: Style): ClarifyAsker {
  return async (question, choices, signal) => {
    output.write(`${style.yellow(`  ? ${question}`)}\n`);
    (choices ?? []).forEach((choice, index) => output.write(`    ${index + 1}. ${choice}\n`));
    if (choices && choices.length > 0) output.write(`    ${choices.length + 1}. Other (type your answer)\n`);
    const line = await input.read(style.yellow(CLARIFY_PROMPT), signal);
    if (line === undefined) return CLARIFY_NO_ANSWER;
    const picked = /^\s*(\d+)\s*$/.exec(line);
    const chosen = picked ? choices?.[Number(picked[1]) - 1] : undefined;
    return chosen ?? line.trim();
  };
}
