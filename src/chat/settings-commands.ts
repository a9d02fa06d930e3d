import { existsSync, readFileSync, statSync } from 'node:fs';
import { ConfigError } from '../errors.js';
import type { SlashCommand } from './slash-commands.js';
import type { Chat } from './chat.js';
import { oneLine } from './style.js';

const NEXT = '(applies from the next session: /reset)';

function pendingNote(chat: Chat, changed: boolean): string {
  return changed ? chat.style.yellow(` ${NEXT}`) : '';
}

/** Commands that show or change what a session offers and shows; changes wait for the next session. */
export const SETTINGS_COMMANDS: SlashCommand[] = [
  {
    name: 'tools',
    help: "list this session's tools",
    run(chat) {
      const { tools } = chat.session;
      if (tools.length === 0) return chat.print('no tools in this session');
      const width = Math.max(...tools.map((tool) => tool.name.length)) + 2;
      for (const tool of tools)
        chat.print(
          `  ${tool.name.padEnd(width)}${chat.style.dim(`[${tool.toolset}]`)} ${oneLine(tool.description, 100)}`,
        );
    },
  },
  {
    name: 'toolsets',
    args: '[a,b]',
    help: 'list the toolsets (* this session, + next session); with a list, use it from the next session',
    run(chat, args) {
      if (args) {
        const toolsets = args
          .split(',')
          .map((name) => name.trim())
          .filter(Boolean);
        chat.services.tools.registry.assertToolsets(toolsets, '/toolsets');
        chat.settings.toolsets = toolsets;
        chat.print(`toolsets for the next session: ${toolsets.join(', ')}${pendingNote(chat, true)}`);
        return;
      }
      for (const name of chat.services.tools.toolsetNames()) {
        const now = chat.session.toolsets.includes(name) ? '*' : ' ';
        const next = chat.settings.toolsets.includes(name) ? '+' : ' ';
        chat.print(`  ${now}${next} ${name}`);
      }
    },
    complete(chat, partial) {
      const head = partial.slice(0, partial.lastIndexOf(',') + 1);
      return chat.services.tools.toolsetNames().map((name) => `${head}${name}`);
    },
  },
  {
    name: 'model',
    args: '[NAME]',
    help: 'show the model; with NAME, use that model (same endpoint) from the next session',
    run(chat, args) {
      if (args) chat.settings.endpoint = { ...chat.settings.endpoint, model: args };
      const { endpoint } = chat.session;
      chat.print(`model ${endpoint.model} at ${endpoint.base_url}`);
      if (chat.settings.endpoint.model !== endpoint.model)
        chat.print(`next session: ${chat.settings.endpoint.model}${pendingNote(chat, true)}`);
    },
  },
  {
    name: 'system',
    args: '[FILE|TEXT]',
    help: "show this session's exact system prompt; with FILE or TEXT, use it as the instructions from the next session",
    run(chat, args) {
      if (!args) return chat.print(chat.session.systemPrompt);
      const fromFile = existsSync(args) && statSync(args).isFile();
      const text = fromFile ? readFileSync(args, 'utf8') : args;
      if (!text.trim())
        throw new ConfigError(
          `/system: ${fromFile ? `file ${args} is empty` : 'give a file or the instructions text'}`,
          { code: 'cli_usage' },
        );
      chat.settings.systemPrompt = text;
      chat.print(
        `instructions for the next session ${fromFile ? `from ${args}` : 'set'} (${text.length} chars)${pendingNote(chat, true)}`,
      );
    },
  },
  {
    name: 'reasoning',
    args: '[on|off]',
    help: "show or hide the model's reasoning as it streams",
    run(chat, args) {
      if (args && args !== 'on' && args !== 'off')
        throw new ConfigError(`/reasoning: expected on or off, got '${args}'`, { code: 'cli_usage' });
      chat.showReasoning = args ? args === 'on' : !chat.showReasoning;
      chat.print(`reasoning ${chat.showReasoning ? 'shown' : 'hidden'}`);
    },
  },
];
