import type { Chat } from './chat.js';

export type SlashResult = 'quit' | void;

export interface SlashCommand {
  name: string;
  aliases?: string[];
  /** Shown in /help, e.g. "RUN KEY [TURN]". */
  args?: string;
  help: string;
  run(chat: Chat, args: string): Promise<SlashResult> | SlashResult;
  /** Candidates for the argument being typed (tab completion). */
  complete?(chat: Chat, partial: string): string[];
}

/**
 * The one list of slash commands: dispatch, /help and tab completion all read it, so a command
 * added here is callable, documented and completable at once.
 */
export class SlashCommands {
  private readonly byName = new Map<string, SlashCommand>();

  constructor(readonly commands: readonly SlashCommand[]) {
    for (const command of commands) {
      for (const name of [command.name, ...(command.aliases ?? [])]) {
        if (this.byName.has(name)) throw new Error(`slash command name '/${name}' is used twice`);
        this.byName.set(name, command);
      }
    }
  }

  find(name: string): SlashCommand | undefined {
    return this.byName.get(name.replace(/^\//, '').toLowerCase());
  }

  async dispatch(chat: Chat, line: string): Promise<SlashResult> {
    const name = commandName(line);
    const command = this.find(name);
    if (!command) {
      chat.print(
        chat.style.red(
          `unknown command /${name}${this.suggest(name)} — /help lists them (start a message with // to send a leading /)`,
        ),
      );
      return;
    }
    return command.run(
      chat,
      line
        .trim()
        .slice(name.length + 1)
        .trim(),
    );
  }

  help(chat: Chat): string {
    const rows = this.commands.map((command) => {
      const usage = `/${command.name}${command.args ? ` ${command.args}` : ''}`;
      const aliases = command.aliases?.length
        ? chat.style.dim(` (also ${command.aliases.map((alias) => `/${alias}`).join(', ')})`)
        : '';
      return { usage, text: `${command.help}${aliases}` };
    });
    const width = Math.max(...rows.map((row) => row.usage.length)) + 2;
    return rows.map((row) => `  ${row.usage.padEnd(width)}${row.text}`).join('\n');
  }

  /** A readline completer: command names after '/', then the command's own argument candidates. */
  completer(chat: () => Chat | undefined): (line: string) => [string[], string] {
    return (line) => {
      if (!line.startsWith('/')) return [[], line];
      const space = line.indexOf(' ');
      if (space === -1) {
        const names = [...this.byName.keys()]
          .map((name) => `/${name}`)
          .filter((name) => name.startsWith(line.toLowerCase()));
        return [names.sort(), line];
      }
      const command = this.find(line.slice(1, space));
      const current = chat();
      if (!command?.complete || !current) return [[], line];
      const partial = line.slice(line.lastIndexOf(' ') + 1);
      return [command.complete(current, partial).filter((candidate) => candidate.startsWith(partial)), partial];
    };
  }

  private suggest(name: string): string {
    const close = [...this.byName.keys()].filter((candidate) => candidate.startsWith(name.slice(0, 2)));
    return close.length > 0
      ? ` (did you mean ${close
          .slice(0, 3)
          .map((candidate) => `/${candidate}`)
          .join(', ')}?)`
      : '';
  }
}

function commandName(line: string): string {
  return line.trim().slice(1).split(/\s+/, 1)[0]!.toLowerCase();
}
