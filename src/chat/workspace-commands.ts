import { errorMessage } from '../errors.js';
import type { SlashCommand } from './slash-commands.js';

/** Commands on what the model works with: the workspace's files and the context window. */
export const WORKSPACE_COMMANDS: SlashCommand[] = [
  {
    name: 'rollback',
    args: '[N]',
    help: 'list the checkpoints (the workspace before each message), or put the files back as they were before message N',
    async run(chat, args) {
      const checkpoints = chat.services.checkpoints;
      if (!checkpoints || checkpoints.list.length === 0)
        return chat.print('no checkpoints yet: one is taken before each message');
      if (args.trim() === '') {
        for (const checkpoint of checkpoints.list)
          chat.print(
            `  ${checkpoint.turn}. before "${checkpoint.label}"${checkpoint.skipped ? chat.style.dim(` (no copy: ${checkpoint.skipped})`) : ''}`,
          );
        return chat.print(
          chat.style.dim('/rollback N puts the workspace back as it was before message N (the conversation stays)'),
        );
      }
      if (!/^\d+$/.test(args.trim())) return chat.print(`usage: /rollback [N], N from 1 to ${checkpoints.list.length}`);
      try {
        const restored = await checkpoints.restore(Number(args.trim()));
        chat.print(chat.style.green(`workspace restored to before message ${restored.turn} ("${restored.label}")`));
      } catch (error) {
        chat.print(chat.style.red(`rollback failed: ${errorMessage(error)}`));
      }
    },
  },
  {
    name: 'compress',
    help: 'compress the conversation now: a summary replaces its middle in every later request',
    async run(chat) {
      const before = await chat.session.contextUse();
      try {
        const compression = await chat.session.compressNow(new AbortController().signal);
        if (!compression) return chat.print('nothing to compress: the conversation is too short');
        const after = await chat.session.contextUse();
        chat.print(
          `compressed messages ${compression.replaced_start + 1}-${compression.replaced_end} into a summary: ` +
            `~${before.tokens} → ~${after.tokens} tokens, ${after.sent_messages} messages sent of ${after.messages}`,
        );
      } catch (error) {
        chat.print(chat.style.red(`compression failed: ${errorMessage(error)}`));
      }
    },
  },
  {
    name: 'context',
    help: 'show how much of the context window the next request uses',
    async run(chat) {
      const use = await chat.session.contextUse();
      const percent = use.contextLength > 0 ? ((100 * use.tokens) / use.contextLength).toFixed(1) : '?';
      chat.print(`context: ~${use.tokens} of ${use.contextLength} tokens (${percent}%)`);
      chat.print(
        `  ${use.messages} messages, ${use.sent_messages} sent after ${use.compressions} compression(s); ` +
          (use.compresses
            ? `compresses at ${Math.round(use.threshold * 100)}% (compression.threshold)`
            : 'automatic compression is off (compression.enabled: false); /compress still works'),
      );
    },
  },
];
