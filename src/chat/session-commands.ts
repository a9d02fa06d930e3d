import { writeFileSync } from 'node:fs';
import { ConfigError } from '../errors.js';
import { COST_NONE, costText } from '../util/cost-text.js';
import { contentText } from '../model/messages.js';
import { ChatSession } from './chat-session.js';
import {
  EXPORT_FORMATS,
  exportSession,
  formatSearchHits,
  formatSessionList,
  type ExportFormat,
} from './session-format.js';
import type { SlashCommand } from './slash-commands.js';
import { oneLine } from './style.js';
import { formatTranscript, lastExchanges } from './transcript.js';

/** Commands over the session store: name, list, resume, search, export, usage. */
export const SESSION_COMMANDS: SlashCommand[] = [
  {
    name: 'save',
    args: '[TITLE]',
    help: 'name this session (sessions are saved after every turn anyway)',
    run(chat, args) {
      const firstUser = chat.session.messages.find((message) => message.role === 'user');
      const title =
        args || (firstUser?.role === 'user' ? oneLine(contentText(firstUser.content), 60) : `chat ${chat.session.id}`);
      chat.session.setTitle(title);
      chat.print(`saved session ${chat.session.id} as "${title}"`);
    },
  },
  {
    name: 'sessions',
    args: '[N]',
    help: 'list the N most recent sessions (default 10)',
    run(chat, args) {
      const limit = args ? Number(args) : 10;
      if (!Number.isInteger(limit) || limit < 1)
        throw new ConfigError(`/sessions N: expected a whole number ≥ 1, got '${args}'`, { code: 'cli_usage' });
      chat.print(formatSessionList(chat.services.store.list(limit), chat.style));
    },
  },
  {
    name: 'resume',
    args: 'ID',
    help: 'continue a stored session (an id or a unique prefix; "last" for the most recent other one)',
    async run(chat, args) {
      if (!args) throw new ConfigError('usage: /resume ID (see /sessions)', { code: 'cli_usage' });
      const id =
        args === 'last' ? chat.services.store.list(2).find((session) => session.id !== chat.session.id)?.id : args;
      if (!id) throw new ConfigError('no other session to resume', { code: 'session_unknown' });
      const session = await ChatSession.resume(id, chat.settings, chat.services);
      chat.useSession(session, 'resumed');
      const { shown, hidden } = lastExchanges(session.messages, 2);
      if (hidden > 0) chat.print(chat.style.dim(`… ${hidden} earlier messages`));
      if (shown.length > 0) chat.print(formatTranscript(shown, chat.style));
    },
    complete(chat) {
      return chat.services.store.list(50).map((session) => session.id);
    },
  },
  {
    name: 'search',
    args: 'QUERY',
    help: 'full-text search over all sessions\' messages (words must all match; "a phrase", prefix*)',
    run(chat, args) {
      if (!args) throw new ConfigError('usage: /search QUERY', { code: 'cli_usage' });
      chat.print(
        formatSearchHits(
          chat.services.store.search(args, {
            limit: 20,
            mark: chat.style.enabled ? ['\x1b[1m', '\x1b[22m'] : ['[', ']'],
          }),
          chat.style,
        ),
      );
    },
  },
  {
    name: 'export',
    args: 'FILE [messages|sharegpt]',
    help: 'write this session to FILE as JSON (messages: OpenAI messages + tools; sharegpt: Hermes ShareGPT); .jsonl → one line',
    run(chat, args) {
      const [file, formatText, ...extra] = args.split(/\s+/).filter(Boolean);
      if (!file || extra.length > 0)
        throw new ConfigError('usage: /export FILE [messages|sharegpt]', { code: 'cli_usage' });
      const format = (formatText ?? 'messages') as ExportFormat;
      if (!EXPORT_FORMATS.includes(format))
        throw new ConfigError(`/export: format must be one of ${EXPORT_FORMATS.join(', ')}, got '${formatText}'`, {
          code: 'cli_usage',
        });
      const { session } = chat;
      const value = exportSession(
        {
          id: session.id,
          model: session.endpoint.model,
          toolsets: session.toolsets,
          forked_from: session.forkedFrom,
          tools: session.toolSpecs,
          messages: session.messages,
        },
        format,
      );
      writeFileSync(
        file,
        file.endsWith('.jsonl') ? `${JSON.stringify(value)}\n` : `${JSON.stringify(value, null, 2)}\n`,
      );
      chat.print(`wrote ${session.messages.length} messages (${format}) to ${file}`);
    },
  },
  {
    name: 'usage',
    help: 'tokens (cached, reasoning), cost and model calls of this session',
    run(chat) {
      const { usage, messages } = chat.session;
      const spent = costText({ usd: usage.cost, unpricedModels: usage.unpriced_models });
      chat.print(
        `session ${chat.session.id}: ${usage.api_calls} model calls · ${usage.prompt_tokens} prompt (${usage.cached_tokens ?? 0} cached)` +
          ` + ${usage.completion_tokens} completion tokens (${usage.reasoning_tokens} reasoning)` +
          `${spent === COST_NONE ? '' : ` · cost ${spent}`} · ${messages.length} messages`,
      );
    },
  },
];
