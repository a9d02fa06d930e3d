import { CONVERSATION_COMMANDS } from './conversation-commands.js';
import { SESSION_COMMANDS } from './session-commands.js';
import { SETTINGS_COMMANDS } from './settings-commands.js';
import { WORKSPACE_COMMANDS } from './workspace-commands.js';
import { SlashCommands, type SlashCommand } from './slash-commands.js';

/** Every slash command of `traj chat`, in the order /help lists them. */
export function chatCommands(): SlashCommands {
  const meta: SlashCommand[] = [
    {
      name: 'help',
      aliases: ['?'],
      args: '[COMMAND]',
      help: 'list the commands, or explain one',
      run(chat, args) {
        const command = args ? registry.find(args) : undefined;
        if (args && !command) return chat.print(`no command /${args.replace(/^\//, '')}`);
        if (command) return chat.print(`/${command.name}${command.args ? ` ${command.args}` : ''} — ${command.help}`);
        chat.print(registry.help(chat));
        chat.print(
          chat.style.dim(
            'Messages go to the model; a line starting with // sends a leading /. Ctrl-C interrupts a turn; twice at an empty prompt quits.',
          ),
        );
      },
      complete: () => registry.commands.map((command) => command.name),
    },
    { name: 'quit', aliases: ['exit', 'q'], help: 'leave the chat (the session is already saved)', run: () => 'quit' },
  ];
  const registry = new SlashCommands([
    meta[0]!,
    ...SETTINGS_COMMANDS,
    ...CONVERSATION_COMMANDS,
    ...WORKSPACE_COMMANDS,
    ...SESSION_COMMANDS,
    meta[1]!,
  ]);
  return registry;
}
