import { errorMessage } from '../errors.js';
import type { Chat } from './chat.js';
import type { SlashCommands } from './slash-commands.js';

/**
 * Read lines until the input ends or /quit: a slash command is dispatched, anything else is one
 * user message and one agent run. A failing command is reported and the chat goes on.
 */
export async function runRepl(chat: Chat, commands: SlashCommands): Promise<void> {
  for (;;) {
    const line = await chat.input.read(chat.prompt());
    if (line === undefined) return;
    chat.quitArmed = false;
    const text = line.trim();
    if (text === '') continue;
    try {
      if (text.startsWith('//')) await chat.runTurn(text.slice(1));
      else if (text.startsWith('/')) {
        if ((await commands.dispatch(chat, text)) === 'quit') return;
      } else await chat.runTurn(text);
    } catch (error) {
      chat.print(chat.style.red(`error: ${errorMessage(error)}`));
    }
  }
}

/**
 * Ctrl-C: interrupts a running turn; at the prompt it clears a typed line, and quits when pressed
 * twice in a row (piped input has no prompt to come back to, so there it quits at once).
 */
export function handleInterrupt(chat: Chat): void {
  if (chat.interrupt()) return;
  const { input } = chat;
  if (input.partialLine) {
    input.clearPartialLine();
    return;
  }
  if (chat.quitArmed || !input.interactive) {
    input.close();
    return;
  }
  chat.quitArmed = true;
  chat.print(`\n${chat.style.dim('(Ctrl-C again to quit, or keep typing)')}`);
  input.reprompt();
}
