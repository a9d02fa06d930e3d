import { toolServicesFor } from '../agent/agent-settings.js';
import type { Endpoint } from '../config/endpoint.js';
import { closeBrowserEngines } from '../tools/browser/engine.js';
import { countingWebCache, type ToolServices } from '../tools/services.js';
import { errorMessage } from '../errors.js';
import { createModelClient } from '../model/client.js';
import type { ModelClient } from '../model/types.js';
import { createSandbox } from '../sandbox/index.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { CommandApprover } from './approval.js';
import { approvalPrompt } from './approval-prompt.js';
import { clarifyPrompt } from './clarify-prompt.js';
import { WorkspaceCheckpoints } from './workspace-checkpoints.js';
import { homeConfigFile } from '../config/home-config.js';
import { loadApprovedCommands, saveApprovedCommand } from './approved-commands.js';
import { Chat } from './chat.js';
import { ChatSession, type ChatServices, type ChatSettings } from './chat-session.js';
import { loadChatKnowledge, type KnowledgeOptions } from './chat-knowledge.js';
import { ChatTools } from './chat-tools.js';
import { chatCommands } from './commands.js';
import { restoreForkFiles, showFork, showForkHint } from './conversation-commands.js';
import type { ForkedConversation } from './fork.js';
import { LineInput } from './line-input.js';
import type { Output } from './renderer.js';
import { handleInterrupt, runRepl } from './repl.js';
import { forkLabel } from './session-format.js';
import { SessionStore } from './session-store.js';
import { createStyle, type Style } from './style.js';
import { formatTranscript, lastExchanges } from './transcript.js';

export interface ChatLaunch {
  /** What a session starts with (the agent's settings and the toolsets), carried whole. */
  settings: ChatSettings;
  /** `hostFolder`: an existing folder to work in (--workdir), local only. */
  sandbox: {
    kind: 'local' | 'docker';
    image?: string;
    workdir?: string;
    hostFolder?: string;
    docker?: Record<string, unknown>;
    local?: Record<string, unknown>;
  };
  mcpServers?: Record<string, unknown>;
  checkpointsDir: string;
  /** Continue a stored session (an id, a unique prefix, or "last"). */
  resume?: string;
  /** Continue a stored rollout (already loaded, so its sandbox settings could be used). */
  fork?: ForkedConversation;
  /** Memory under TRAJ_HOME/memories, skills, and where context-file discovery starts. */
  knowledge?: KnowledgeOptions;
  /** Default TRAJ_HOME/sessions.sqlite. */
  sessionsFile?: string;
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  /** A terminal on both ends: prompts, line editing, completion, colours. */
  interactive: boolean;
  color: boolean;
}

/** Run `traj chat` until the input ends or /quit; the sandbox, MCP servers and store are closed in any case. */
export async function runChat(launch: ChatLaunch): Promise<number> {
  const style = createStyle(launch.color);
  const output: Output = { write: (text) => void launch.output.write(text) };
  const commands = chatCommands();
  let chat: Chat | undefined;
  const input = new LineInput({
    input: launch.input,
    output: launch.output,
    interactive: launch.interactive,
    completer: commands.completer(() => chat),
    onInterrupt: () => chat && handleInterrupt(chat),
  });
  const onSignal = () => chat && handleInterrupt(chat);
  const onTerminate = () => {
    chat?.interrupt();
    input.close();
  };
  // On a terminal readline turns the Ctrl-C key into onInterrupt; a SIGINT sent from outside lands here.
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onTerminate);
  const store = SessionStore.open(launch.sessionsFile);
  const approver =
    launch.sandbox.kind === 'local'
      ? new CommandApprover(approvalPrompt(input, output, style), alwaysApproved(output, style))
      : undefined;
  const models = modelClients();
  // A chat has no run store: the web cache lives for the chat, so a page read twice is fetched once.
  const toolServices: ToolServices = { ...toolServicesFor(launch.settings, models), webCache: countingWebCache() };
  const tools = new ChatTools({
    mcpServers: launch.mcpServers,
    approver,
    services: toolServices,
    terminal: launch.settings.tools.terminal,
  });
  let sandbox: Sandbox | undefined;
  let checkpoints: WorkspaceCheckpoints | undefined;
  try {
    sandbox = await createSandbox({ ...launch.sandbox, run: 'chat', key: 'chat' });
    const knowledge = loadChatKnowledge(launch.knowledge ?? {});
    const clarify = clarifyPrompt(input, output, style);
    checkpoints = new WorkspaceCheckpoints(sandbox);
    const services: ChatServices = { store, tools, sandbox, model: models, knowledge, clarify, checkpoints };
    const { settings } = launch;
    const session = launch.resume
      ? await ChatSession.resume(
          launch.resume === 'last' ? (store.list(1)[0]?.id ?? 'last') : launch.resume,
          settings,
          services,
        )
      : launch.fork
        ? await ChatSession.fork(launch.fork, settings, services)
        : await ChatSession.start(settings, services);
    chat = new Chat({ session, settings, services, input, output, style, checkpointsDir: launch.checkpointsDir });
    await banner(chat, sandbox, approver !== undefined);
    if (launch.fork) {
      showFork(chat, launch.fork);
      await restoreForkFiles(chat, launch.fork);
      showForkHint(chat, launch.fork);
    } else if (launch.resume) showTail(chat, style);
    await runRepl(chat, commands);
    return finalSave(chat, style);
  } finally {
    input.close();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onTerminate);
    await chat?.session.dispose();
    await closeBrowserEngines();
    await tools.close().catch(() => undefined);
    await sandbox?.dispose().catch(() => undefined);
    checkpoints?.dispose();
    store.close();
  }
}

/** A session whose last write failed gets one more try; if that fails too, the chat exits 1 saying so. */
function finalSave(chat: Chat, style: Style): number {
  if (!chat.session.unsaved) return 0;
  try {
    chat.session.persist();
    return 0;
  } catch (error) {
    chat.print(style.red(`error: session ${chat.session.id} could not be stored: ${errorMessage(error)}`));
    return 1;
  }
}

/** "Always" approvals: read once from TRAJ_HOME/config.yaml, each new one written back at once. */
function alwaysApproved(output: Output, style: Style): { ids(): readonly string[]; add(id: string): void } {
  let ids: string[];
  try {
    ids = loadApprovedCommands();
  } catch (error) {
    output.write(`${style.red(`approved commands not loaded: ${errorMessage(error)}`)}\n`);
    ids = [];
  }
  return {
    ids: () => ids,
    add(id) {
      try {
        ids = saveApprovedCommand(id);
      } catch (error) {
        ids = [...ids, id];
        output.write(
          `${style.red(`could not save the approval to ${homeConfigFile()} (kept for this chat): ${errorMessage(error)}`)}\n`,
        );
      }
    },
  };
}

function modelClients(): (endpoint: Endpoint) => ModelClient {
  const clients = new Map<string, ModelClient>();
  return (endpoint) => {
    const id = JSON.stringify(endpoint);
    let client = clients.get(id);
    if (!client) {
      client = createModelClient(endpoint);
      clients.set(id, client);
    }
    return client;
  };
}

async function banner(chat: Chat, sandbox: Sandbox, guarded: boolean): Promise<void> {
  const { session, style } = chat;
  const origin = session.forkedFrom ? ` (${forkLabel(session.forkedFrom)})` : '';
  chat.print(style.bold(`traj chat · session ${session.id}${origin}`));
  chat.print(
    style.dim(
      `model ${session.endpoint.model} at ${session.endpoint.base_url} · toolsets ${session.toolsets.join(', ') || '(none)'}`,
    ),
  );
  chat.print(
    style.dim(`sandbox ${sandbox.kind} ${sandbox.workdir}${guarded ? ' · dangerous commands ask first' : ''}`),
  );
  for (const tool of await chat.services.tools.unavailable(session.toolsets))
    chat.print(style.red(`${tool.name} [${tool.toolset}] is not offered: ${tool.reason}`));
  chat.print(style.dim('/help lists commands · Ctrl-C interrupts a turn, twice at the prompt quits'));
}

function showTail(chat: Chat, style: Style): void {
  const { shown, hidden } = lastExchanges(chat.session.messages, 2);
  if (hidden > 0) chat.print(style.dim(`… ${hidden} earlier messages`));
  if (shown.length > 0) chat.print(formatTranscript(shown, style));
}
