import type { Compression } from '../agent/compression.js';
import { agentLoopOptions, toolServicesFor, type AgentSettings } from '../agent/agent-settings.js';
import { runAgent } from '../agent/loop.js';
import { ContextWindow } from '../agent/context-window.js';
import type { AgentEventHandler } from '../agent/events.js';
import type { AgentResult } from '../agent/result.js';
import { buildSystemPrompt } from '../agent/system-prompt.js';
import { CompressionSettingsSchema } from '../config/compression.js';
import type { Endpoint } from '../config/endpoint.js';
import { addUsage, contentText, type Message, type ToolSpec } from '../model/messages.js';
import type { ModelClient } from '../model/types.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { toolSpec } from '../tools/tool-spec.js';
import type { Tool } from '../tools/tool.js';
import type { ToolServices } from '../tools/services.js';
import { CLARIFY_STATE_KEY, type ClarifyAsker } from '../tools/clarify.js';
import { disposeToolState } from '../tools/tool-state.js';
import { knowledgeSections, provideKnowledge, type ChatKnowledge } from './chat-knowledge.js';
import type { ChatTools } from './chat-tools.js';
import type { WorkspaceCheckpoints } from './workspace-checkpoints.js';
import { emptySessionUsage, type ForkOrigin, type Session, type SessionUsage } from './session.js';
import { newSessionId, type SessionStore } from './session-store.js';

/** What /context shows: the next request's size against the window. */
export interface ContextUse {
  tokens: number;
  contextLength: number;
  threshold: number;
  compresses: boolean;
  messages: number;
  sent_messages: number;
  compressions: number;
}

/** What a new session is started with; /model, /toolsets and /system change it for the next one. */
export interface ChatSettings extends AgentSettings {
  toolsets: string[];
}

/** The process-wide parts every session of one `traj chat` shares. */
export interface ChatServices {
  store: SessionStore;
  tools: ChatTools;
  sandbox: Sandbox;
  model(endpoint: Endpoint): ModelClient;
  /** Memory, skills and context files (absent in tests that need none). */
  knowledge?: ChatKnowledge;
  /** How clarify asks the person (absent: clarify gives the configured answer, as in batch). */
  clarify?: ClarifyAsker;
  /** The workspace before each message, for /rollback (absent in tests that need none). */
  checkpoints?: WorkspaceCheckpoints;
}

interface SessionInit {
  id: string;
  messages: Message[];
  tools: Tool[];
  toolsets: string[];
  endpoint: Endpoint;
  title: string | null;
  forkedFrom: ForkOrigin | null;
  usage: SessionUsage;
  /** Whether the sessions table already has this session's row. */
  stored: boolean;
}

/**
 * One conversation: its messages (the exact system prompt first), the tools fixed when it began,
 * the todo state that carries over between turns, and its row in the session store. Each user
 * message is one runAgent call over the whole history; the history becomes the result's messages.
 */
export class ChatSession {
  readonly id: string;
  readonly tools: Tool[];
  readonly toolsets: string[];
  readonly endpoint: Endpoint;
  readonly forkedFrom: ForkOrigin | null;
  title: string | null;
  usage: SessionUsage;
  private history: Message[];
  private stored: boolean;
  private readonly state = new Map<string, unknown>();
  /** Compressions of this session's context so far (kept in memory; a resumed session starts afresh). */
  private compressions: Compression[] = [];

  private constructor(
    init: SessionInit,
    private readonly settings: ChatSettings,
    private readonly services: ChatServices,
  ) {
    this.id = init.id;
    this.history = init.messages;
    this.tools = init.tools;
    this.toolsets = init.toolsets;
    this.endpoint = init.endpoint;
    this.title = init.title;
    this.forkedFrom = init.forkedFrom;
    this.usage = init.usage;
    this.stored = init.stored;
    provideKnowledge(this.state, services.knowledge, services.store, () => this.id);
    if (services.clarify) this.state.set(CLARIFY_STATE_KEY, services.clarify);
  }

  /** A fresh session: the system prompt is built once from the settings and stays fixed. */
  static async start(settings: ChatSettings, services: ChatServices): Promise<ChatSession> {
    const tools = await services.tools.select(settings.toolsets, '--toolsets');
    const system = buildSystemPrompt({
      base: settings.systemPrompt,
      tools,
      sections: knowledgeSections(services.knowledge, settings.toolsets),
    });
    return new ChatSession(
      {
        id: newSessionId(),
        messages: [{ role: 'system', content: system }],
        tools,
        toolsets: [...settings.toolsets],
        endpoint: settings.endpoint,
        title: null,
        forkedFrom: null,
        usage: emptySessionUsage(),
        stored: false,
      },
      settings,
      services,
    );
  }

  /** A stored session, continued under its own id with its toolsets and exact messages. */
  static async resume(idOrPrefix: string, settings: ChatSettings, services: ChatServices): Promise<ChatSession> {
    const stored = services.store.get(idOrPrefix);
    const tools = await services.tools.select(stored.toolsets, `session ${stored.id} toolsets`);
    return new ChatSession(
      {
        id: stored.id,
        messages: stored.messages,
        tools,
        toolsets: stored.toolsets,
        endpoint: settings.endpoint,
        title: stored.title,
        forkedFrom: stored.forked_from,
        usage: stored.usage,
        stored: true,
      },
      settings,
      services,
    );
  }

  /** A new session holding a stored rollout's messages (cut at a turn), with that rollout's toolsets. */
  static async fork(
    fork: { origin: ForkOrigin; messages: Message[]; toolsets: string[] },
    settings: ChatSettings,
    services: ChatServices,
  ): Promise<ChatSession> {
    const tools = await services.tools.select(fork.toolsets, `toolsets of ${fork.origin.run} item ${fork.origin.key}`);
    const session = new ChatSession(
      {
        id: newSessionId(),
        messages: [...fork.messages],
        tools,
        toolsets: [...fork.toolsets],
        endpoint: settings.endpoint,
        title: null,
        forkedFrom: fork.origin,
        usage: emptySessionUsage(),
        stored: false,
      },
      settings,
      services,
    );
    session.persist();
    return session;
  }

  get messages(): readonly Message[] {
    return this.history;
  }

  get systemPrompt(): string {
    const first = this.history[0];
    return first?.role === 'system' ? first.content : '';
  }

  get toolSpecs(): ToolSpec[] {
    return this.tools.map(toolSpec);
  }

  /** Whether the next model call is owed without a new user message (e.g. a fork cut after tool results). */
  get canContinue(): boolean {
    return this.history.some((message) => message.role !== 'system');
  }

  /**
   * Run the agent on the history plus `text` (or on the history alone when `text` is undefined).
   * The user message is stored before the model is called, the outcome after, also when interrupted.
   */
  /** Close what the session's tools hold open (its browser context); the history stays in the store. */
  async dispose(): Promise<void> {
    await disposeToolState(this.state);
  }

  async send(
    text: string | undefined,
    options: { signal: AbortSignal; onEvent: AgentEventHandler },
  ): Promise<AgentResult> {
    const messages: Message[] =
      text === undefined ? [...this.history] : [...this.history, { role: 'user', content: text }];
    this.history = messages;
    this.persist();
    const model = this.services.model(this.endpoint);
    const settings = { ...this.settings, endpoint: this.endpoint };
    const result = await runAgent({
      ...(await agentLoopOptions(settings, model, this.toolServices(settings), this.compressions)),
      tools: this.tools,
      messages,
      sandbox: this.services.sandbox,
      signal: options.signal,
      onEvent: options.onEvent,
      stream: true,
      state: this.state,
    });
    this.history = result.messages;
    this.compressions = result.compressions ?? [];
    this.usage = { ...addUsage({ ...this.usage }, result.usage), api_calls: this.usage.api_calls + result.apiCalls };
    this.persist();
    return result;
  }

  /**
   * The session's context window as the next request would fill it: the tokens of the history (as
   * sent, with the compression in force), the window, and when compression starts. Manual ones
   * compress whatever the threshold, even with compression.enabled false.
   */
  private async contextWindow(manual = false): Promise<ContextWindow> {
    const settings = { ...this.settings, endpoint: this.endpoint };
    const compression = manual
      ? { ...CompressionSettingsSchema.parse(this.settings.compression ?? {}), enabled: true }
      : settings.compression;
    const model = this.services.model(this.endpoint);
    const options = await agentLoopOptions(
      { ...settings, compression },
      model,
      this.toolServices(settings),
      this.compressions,
    );
    return new ContextWindow(options.context);
  }

  async contextUse(): Promise<ContextUse> {
    const window = await this.contextWindow();
    return {
      tokens: window.estimate(this.history, this.toolSpecs),
      ...window.window,
      messages: this.history.length,
      sent_messages: window.view(this.history).length,
      compressions: this.compressions.length,
    };
  }

  /** Compress the history now (/compress): the summary replaces the middle of every later request. */
  async compressNow(signal: AbortSignal): Promise<Compression | undefined> {
    const window = await this.contextWindow(true);
    const compression = await window.compressNow(this.history, this.toolSpecs, this.state, signal);
    if (!compression) return undefined;
    this.compressions = window.compressions;
    this.usage = addUsage({ ...this.usage }, window.usage) as SessionUsage;
    this.persist();
    return compression;
  }

  /** The chat's tool services; a session built without them (tests) gets the settings' own. */
  private toolServices(settings: AgentSettings): ToolServices {
    return this.services.tools.services ?? toolServicesFor(settings, (endpoint) => this.services.model(endpoint));
  }

  /** Drop the last user message and everything after it; returns it, or undefined when there is none. */
  undo(): string | undefined {
    const index = this.lastUserIndex();
    if (index === undefined) return undefined;
    const message = this.history[index]!;
    this.history = this.history.slice(0, index);
    this.persist();
    return message.role === 'user' ? contentText(message.content) : undefined;
  }

  setTitle(title: string): void {
    this.title = title;
    this.persist();
  }

  /**
   * True while the last write of this session failed (e.g. the store stayed locked past the busy
   * timeout). The next persist writes the whole history, so one later success heals it.
   */
  unsaved = false;

  /**
   * Write the session and its messages; the row is created on the first write. One transaction:
   * another chat on the same TRAJ_HOME never sees the row without its messages, and a failed
   * write leaves nothing half done (`stored` changes only once the row is really there).
   */
  persist(): void {
    const { store } = this.services;
    try {
      store.write(() => {
        if (!this.stored) store.create(this.sessionRow());
        else store.update(this.id, { title: this.title ?? undefined, usage: this.usage });
        store.replaceMessages(this.id, this.history);
      });
      this.stored = true;
      this.unsaved = false;
    } catch (error) {
      this.unsaved = true;
      throw error;
    }
  }

  private sessionRow(): Omit<Session, 'created_at' | 'updated_at' | 'message_count'> {
    return {
      id: this.id,
      title: this.title,
      model: this.endpoint.model,
      base_url: this.endpoint.base_url,
      toolsets: this.toolsets,
      tools: this.toolSpecs,
      sandbox: this.services.sandbox.kind,
      forked_from: this.forkedFrom,
      usage: this.usage,
    };
  }

  private lastUserIndex(): number | undefined {
    for (let index = this.history.length - 1; index >= 0; index--)
      if (this.history[index]!.role === 'user') return index;
    return undefined;
  }
}
