import { readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError } from '../errors.js';
import type { Chat } from './chat.js';
import { ChatSession } from './chat-session.js';
import { changedTools } from './chat-tools.js';
import { loadFork, type ForkedConversation } from './fork.js';
import { replayFileCalls } from './fork-files.js';
import { FILE_TOOLSET } from '../tools/tool.js';
import { loadToolRegistry } from '../tools/builtin.js';
import { forkLabel } from './session-format.js';
import type { SlashCommand } from './slash-commands.js';
import { oneLine } from './style.js';
import { formatTranscript, lastExchanges } from './transcript.js';

/** Commands that change the conversation: start over, redo, take back, continue, fork a rollout. */
export const CONVERSATION_COMMANDS: SlashCommand[] = [
  {
    name: 'reset',
    aliases: ['new'],
    help: 'start a new session with the current settings (the sandbox and its files stay)',
    async run(chat) {
      chat.useSession(await chat.newSession(), 'new session');
    },
  },
  {
    name: 'retry',
    help: 'send the last user message again, replacing the answer it got',
    async run(chat) {
      const text = chat.session.undo();
      if (text === undefined) return chat.print('nothing to retry: the session has no user message yet');
      chat.print(chat.style.dim(`retrying: ${oneLine(text, 100)}`));
      await chat.runTurn(text);
    },
  },
  {
    name: 'undo',
    help: 'remove the last user message and everything after it',
    run(chat) {
      const text = chat.session.undo();
      chat.print(
        text === undefined ? 'nothing to undo' : chat.style.dim(`removed the last exchange: ${oneLine(text, 100)}`),
      );
    },
  },
  {
    name: 'continue',
    help: 'call the model again without a new message (e.g. after /fork at a tool turn)',
    async run(chat) {
      if (!chat.session.canContinue) return chat.print('nothing to continue: send a message first');
      await chat.runTurn(undefined);
    },
  },
  {
    name: 'fork',
    args: 'RUN KEY [TURN]',
    help: 'continue a stored rollout: run store checkpoints/RUN.sqlite, item KEY (or KEY:SAMPLE), cut after assistant turn TURN (default: all)',
    async run(chat, args) {
      const [run, key, turnText, ...extra] = args.split(/\s+/).filter(Boolean);
      if (!run || !key || extra.length > 0) throw new ConfigError('usage: /fork RUN KEY [TURN]', { code: 'cli_usage' });
      await forkInto(chat, { run, key, turn: parseTurn(turnText) });
    },
    complete(chat, partial) {
      if (partial.includes('/')) return [];
      try {
        return readdirSync(resolve(chat.checkpointsDir))
          .filter((file) => file.endsWith('.sqlite'))
          .map((file) => file.slice(0, -'.sqlite'.length));
      } catch {
        return [];
      }
    },
  },
];

export function parseTurn(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text))
    throw new ConfigError(`TURN must be a whole number ≥ 0 (assistant turns to keep), got '${text}'`, {
      code: 'cli_usage',
    });
  return Number(text);
}

/** Load the rollout and continue it in a new session. */
export async function forkInto(chat: Chat, request: { run: string; key: string; turn?: number }): Promise<void> {
  const fork = loadFork({ ...request, checkpointsDir: chat.checkpointsDir });
  chat.useSession(await ChatSession.fork(fork, chat.settings, chat.services), `forked (${forkLabel(fork.origin)})`);
  showFork(chat, fork);
  await restoreForkFiles(chat, fork);
  showForkHint(chat, fork);
}

/** Rebuild the rollout's files in the chat's sandbox from its file-tool calls, and say what could not be. */
export async function restoreForkFiles(chat: Chat, fork: ForkedConversation): Promise<void> {
  const fileTools = (await loadToolRegistry()).select([FILE_TOOLSET], { env: {} });
  const report = await replayFileCalls(fork.messages, fileTools, chat.services.sandbox);
  const { style } = chat;
  if (report.replayed > 0)
    chat.print(
      style.dim(
        `restored the rollout's files from its ${report.replayed} write_file/patch calls: ${report.files.join(', ')}`,
      ),
    );
  const others = Object.entries(report.notReplayed).map(([name, count]) => `${count} ${name}`);
  if (others.length > 0)
    chat.print(
      style.yellow(
        `not restored: what ${others.join(', ')} call(s) did to files (the record holds their output, not their effects)`,
      ),
    );
  for (const failure of report.failed) chat.print(style.yellow(`could not replay ${failure}`));
}

/** Show where a forked conversation stands and what differs from the rollout. */
export function showFork(chat: Chat, fork: ForkedConversation): void {
  const { session } = chat;
  const { shown, hidden } = lastExchanges(fork.messages, 2);
  if (hidden > 0) chat.print(chat.style.dim(`… ${hidden} earlier messages`));
  if (shown.length > 0) chat.print(formatTranscript(shown, chat.style));
  const changed = changedTools(fork.tools, session.tools);
  if (changed.length > 0)
    chat.print(
      chat.style.yellow(
        `note: tool schemas differ from the rollout's (${changed.join(', ')}); the model now sees today's`,
      ),
    );
  if (fork.model !== session.endpoint.model)
    chat.print(chat.style.dim(`note: the rollout used model ${fork.model}; this chat uses ${session.endpoint.model}`));
}

/** After the fork is shown and its files rebuilt: how to go on from a cut after tool results. */
export function showForkHint(chat: Chat, fork: ForkedConversation): void {
  const last = fork.messages[fork.messages.length - 1];
  if (last?.role === 'tool' || last?.role === 'user')
    chat.print(chat.style.dim('send a message, or /continue to let the model answer from here'));
}
