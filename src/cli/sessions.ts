import { writeFileSync } from 'node:fs';
import { ConfigError } from '../errors.js';
// The session modules alone: listing sessions need not load the model client or the agent.
import {
  EXPORT_FORMATS,
  exportSession,
  forkLabel,
  formatSearchHits,
  formatSessionList,
  type ExportFormat,
} from '../chat/session-format.js';
import { SessionStore } from '../chat/session-store.js';
import { createStyle } from '../chat/style.js';
import { formatTranscript } from '../chat/transcript.js';
import { integerOption, stringOption, type CommandDefinition } from './command.js';

const ACTIONS = ['list', 'search', 'show', 'export'] as const;

export const command: CommandDefinition = {
  name: 'sessions',
  summary: 'list, search, show and export the chat sessions in TRAJ_HOME/sessions.sqlite',
  usage: 'traj sessions list | search QUERY | show ID | export ID [--format sharegpt|messages] [--out FILE]',
  allowPositionals: true,
  options: {
    limit: { type: 'string', value: 'N', description: 'list/search: at most N rows', default: '20' },
    format: {
      type: 'string',
      value: 'messages|sharegpt',
      description: 'export: OpenAI messages + tools, or the Hermes ShareGPT view',
      default: 'messages',
    },
    out: { type: 'string', value: 'FILE', description: 'export: write to FILE instead of stdout' },
    system: { type: 'boolean', description: 'show: include the system prompt' },
    json: { type: 'boolean', description: 'list/search/show: print JSON' },
  },
  details: `Examples:
  traj sessions list
  traj sessions search "permission denied"
  traj sessions show 20250101-120000-ab12cd
  traj sessions export 20250101-120000 --format sharegpt --out session.json
ID may be a unique prefix of a session id. Search: all words must match; "a phrase" and prefix* work.`,
  async run({ values, positionals }) {
    const [action, ...rest] = positionals;
    if (!action || !(ACTIONS as readonly string[]).includes(action)) {
      throw new ConfigError(
        `traj sessions: expected one of ${ACTIONS.join(', ')}, got '${positionals.join(' ') || '(nothing)'}' (see 'traj sessions --help')`,
        { code: 'cli_usage' },
      );
    }
    const limit = integerOption(values, 'limit') ?? 20;
    const style = createStyle(Boolean(process.stdout.isTTY) && !process.env.NO_COLOR);
    const json = values.json === true;
    const store = SessionStore.open();
    const print = (text: string) => process.stdout.write(`${text}\n`);
    try {
      switch (action) {
        case 'list': {
          expectArguments(action, rest, 0);
          const sessions = store.list(limit);
          print(json ? JSON.stringify(sessions, null, 2) : formatSessionList(sessions, style));
          return 0;
        }
        case 'search': {
          const query = rest.join(' ').trim();
          if (!query)
            throw new ConfigError('traj sessions search QUERY: give the words to search for', { code: 'cli_usage' });
          const hits = store.search(query, { limit, mark: style.enabled ? ['\x1b[1m', '\x1b[22m'] : ['[', ']'] });
          print(json ? JSON.stringify(hits, null, 2) : formatSearchHits(hits, style));
          return hits.length > 0 ? 0 : 1;
        }
        case 'show': {
          expectArguments(action, rest, 1);
          const session = store.get(rest[0]!);
          if (json) {
            print(JSON.stringify(session, null, 2));
            return 0;
          }
          print(
            style.bold(
              `session ${session.id}${session.title ? ` "${session.title}"` : ''}${session.forked_from ? ` (${forkLabel(session.forked_from)})` : ''}`,
            ),
          );
          print(
            style.dim(
              `model ${session.model} at ${session.base_url} · toolsets ${session.toolsets.join(', ') || '(none)'} · sandbox ${session.sandbox} · ${session.usage.api_calls} model calls`,
            ),
          );
          print(formatTranscript(session.messages, style, { showSystem: values.system === true }));
          return 0;
        }
        default: {
          expectArguments(action, rest, 1);
          const format = (stringOption(values, 'format') ?? 'messages') as ExportFormat;
          if (!EXPORT_FORMATS.includes(format))
            throw new ConfigError(`--format: expected one of ${EXPORT_FORMATS.join(', ')}, got '${format}'`, {
              code: 'cli_usage',
            });
          const text = `${JSON.stringify(exportSession(store.get(rest[0]!), format), null, 2)}\n`;
          const out = stringOption(values, 'out');
          if (out) writeFileSync(out, text);
          else process.stdout.write(text);
          return 0;
        }
      }
    } finally {
      store.close();
    }
  },
};

function expectArguments(action: string, rest: string[], count: number): void {
  if (rest.length !== count) {
    const what = count === 0 ? 'no arguments' : 'one session ID';
    throw new ConfigError(`traj sessions ${action}: expected ${what}, got '${rest.join(' ')}'`, { code: 'cli_usage' });
  }
}
