import { parseApprovalAnswer, type AskApproval } from './approval.js';
import type { LineInput } from './line-input.js';
import type { Output } from './renderer.js';
import { oneLine, type Style } from './style.js';

export const APPROVAL_QUESTION = '  allow? [o]nce / [s]ession / [a]lways / [d]eny: ';

/**
 * Ask on the chat's own input: in a terminal the user types the answer; piped, the next input
 * line is the answer (y/once, s/session, a/always, anything else denies).
 */
export function approvalPrompt(input: LineInput, output: Output, style: Style): AskApproval {
  return async (command, patterns, signal) => {
    output.write(
      `${style.yellow(`  ⚠ dangerous command — ${patterns.map((pattern) => pattern.description).join('; ')}`)}\n`,
    );
    output.write(`    ${style.bold(oneLine(command, 300))}\n`);
    const answer = parseApprovalAnswer(await input.read(style.yellow(APPROVAL_QUESTION), signal));
    const said =
      answer === 'deny'
        ? style.red('denied: the command was not run')
        : style.green(
            `allowed (${answer === 'once' ? 'this time' : answer === 'session' ? 'for this chat' : 'always, saved in config.yaml'})`,
          );
    output.write(`    ${said}\n`);
    return answer;
  };
}
