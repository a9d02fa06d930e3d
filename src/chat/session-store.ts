import type Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { ConfigError } from '../errors.js';
import { contentText, MessageSchema, type Message } from '../model/messages.js';
import { trajHome } from '../util/paths.js';
import { openDatabase } from '../util/sqlite.js';
import { toFtsQuery } from './fts-query.js';
import { ForkOriginSchema, SessionSchema, type Session } from './session.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS sessions (
  id TEXT PRIMARY KEY, title TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
  model TEXT NOT NULL, base_url TEXT NOT NULL, toolsets TEXT NOT NULL, tools TEXT NOT NULL,
  sandbox TEXT NOT NULL, forked_from TEXT, usage TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS messages (
  id INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  position INTEGER NOT NULL, role TEXT NOT NULL, message TEXT NOT NULL, text TEXT NOT NULL, created_at TEXT NOT NULL,
  UNIQUE (session_id, position)
);
CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts USING fts5(text, content = 'messages', content_rowid = 'id', tokenize = 'unicode61');
CREATE TRIGGER IF NOT EXISTS messages_fts_insert AFTER INSERT ON messages BEGIN
  INSERT INTO messages_fts (rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER IF NOT EXISTS messages_fts_delete AFTER DELETE ON messages BEGIN
  INSERT INTO messages_fts (messages_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
`;

export interface SearchHit {
  session_id: string;
  position: number;
  role: string;
  snippet: string;
  title: string | null;
  updated_at: string;
}

export interface SessionSummary extends Session {
  /** The first user message, for listing sessions without a title. */
  preview: string | null;
}

export interface SessionWithMessages extends Session {
  messages: Message[];
}

type SessionRow = Record<string, string | number | null>;

export function defaultSessionsFile(): string {
  return join(trajHome(), 'sessions.sqlite');
}

/** A sortable, readable id: the creation time in UTC, then 6 random hex digits. */
export function newSessionId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${stamp}-${randomBytes(3).toString('hex')}`;
}

/** What full-text search sees of a message: its visible text, reasoning and tool calls. */
export function searchableText(message: Message): string {
  switch (message.role) {
    case 'assistant':
      return [
        message.reasoning,
        message.content,
        ...(message.tool_calls ?? []).map((call) => `${call.function.name} ${call.function.arguments}`),
      ]
        .filter((part) => part?.trim())
        .join('\n');
    case 'system':
      // Every session starts with much the same system prompt: indexing it would match them all.
      return '';
    case 'user':
      return contentText(message.content);
    default:
      return message.content;
  }
}

/**
 * Chat sessions in SQLite (WAL): a sessions table, a messages table (one row per message, by
 * position) and an FTS5 index over the messages' text kept in step by triggers.
 *
 * Several `traj chat` processes may share one TRAJ_HOME, so every write is an IMMEDIATE
 * transaction: it takes the write lock when it begins, waiting out the busy timeout while another
 * process holds it. A deferred transaction that reads first (replaceMessages compares the stored
 * messages) would instead fail at once with "database is locked" when it tries to upgrade to a
 * writer: SQLite cannot wait there, since its snapshot may be stale.
 */
export class SessionStore {
  readonly db: Database.Database;

  private constructor(readonly path: string) {
    this.db = openDatabase(path);
    this.db.pragma('foreign_keys = ON');
    // Two chats starting at once may both create the tables: one waits for the other.
    this.write(() => this.db.exec(SCHEMA));
  }

  static open(path = defaultSessionsFile()): SessionStore {
    return new SessionStore(path);
  }

  /** Run `write` as one IMMEDIATE transaction (nested calls become savepoints of the outer one). */
  write<T>(write: () => T): T {
    return this.db.transaction(write).immediate();
  }

  create(session: Omit<Session, 'created_at' | 'updated_at' | 'message_count'>): void {
    const now = new Date().toISOString();
    this.write(() =>
      this.db
        .prepare(
          `INSERT INTO sessions (id, title, created_at, updated_at, model, base_url, toolsets, tools, sandbox, forked_from, usage)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          session.id,
          session.title,
          now,
          now,
          session.model,
          session.base_url,
          JSON.stringify(session.toolsets),
          JSON.stringify(session.tools),
          session.sandbox,
          session.forked_from ? JSON.stringify(session.forked_from) : null,
          JSON.stringify(session.usage),
        ),
    );
  }

  has(id: string): boolean {
    return this.db.prepare('SELECT 1 FROM sessions WHERE id = ?').get(id) !== undefined;
  }

  update(id: string, fields: Partial<Pick<Session, 'title' | 'usage'>>): void {
    const now = new Date().toISOString();
    this.write(() => {
      if (fields.title !== undefined)
        this.db.prepare('UPDATE sessions SET title = ?, updated_at = ? WHERE id = ?').run(fields.title, now, id);
      if (fields.usage !== undefined)
        this.db
          .prepare('UPDATE sessions SET usage = ?, updated_at = ? WHERE id = ?')
          .run(JSON.stringify(fields.usage), now, id);
    });
  }

  /**
   * Make the stored messages equal `messages`: rows from the first difference on are replaced,
   * the common prefix stays untouched (so /undo and /retry rewrite only the tail).
   */
  replaceMessages(id: string, messages: readonly Message[]): { kept: number; removed: number; added: number } {
    return this.write(() => {
      const stored = this.db
        .prepare('SELECT message FROM messages WHERE session_id = ? ORDER BY position')
        .pluck()
        .all(id) as string[];
      const texts = messages.map((message) => JSON.stringify(message));
      let kept = 0;
      while (kept < stored.length && kept < texts.length && stored[kept] === texts[kept]) kept++;
      const removed = this.db
        .prepare('DELETE FROM messages WHERE session_id = ? AND position >= ?')
        .run(id, kept).changes;
      const insert = this.db.prepare(
        'INSERT INTO messages (session_id, position, role, message, text, created_at) VALUES (?, ?, ?, ?, ?, ?)',
      );
      const now = new Date().toISOString();
      for (let position = kept; position < messages.length; position++) {
        insert.run(id, position, messages[position]!.role, texts[position]!, searchableText(messages[position]!), now);
      }
      this.db.prepare('UPDATE sessions SET updated_at = ? WHERE id = ?').run(now, id);
      return { kept, removed, added: messages.length - kept };
    });
  }

  /** The session an id or a unique id prefix names; a ConfigError lists candidates otherwise. */
  resolveId(idOrPrefix: string): string {
    const wanted = idOrPrefix.trim();
    if (wanted === '')
      throw new ConfigError('give a session id (traj sessions list shows them)', { code: 'session_missing' });
    if (this.has(wanted)) return wanted;
    const escaped = wanted.replace(/[\\%_]/g, (character) => `\\${character}`);
    const matches = this.db
      .prepare(`SELECT id FROM sessions WHERE id LIKE ? ESCAPE '\\' ORDER BY updated_at DESC LIMIT 6`)
      .pluck()
      .all(`${escaped}%`) as string[];
    if (matches.length === 1) return matches[0]!;
    if (matches.length === 0)
      throw new ConfigError(`no chat session '${wanted}' in ${this.path} (traj sessions list shows them)`, {
        code: 'session_unknown',
      });
    throw new ConfigError(
      `session id '${wanted}' is ambiguous: ${matches.slice(0, 5).join(', ')}${matches.length > 5 ? ', …' : ''}`,
      {
        code: 'session_ambiguous',
      },
    );
  }

  get(idOrPrefix: string): SessionWithMessages {
    const id = this.resolveId(idOrPrefix);
    const row = this.db.prepare(`${SESSION_SELECT} WHERE s.id = ?`).get(id) as SessionRow;
    const messages = (
      this.db.prepare('SELECT message FROM messages WHERE session_id = ? ORDER BY position').pluck().all(id) as string[]
    ).map((text) => MessageSchema.parse(JSON.parse(text)));
    return { ...toSession(row), messages };
  }

  /** Most recently updated first. */
  list(limit = 20): SessionSummary[] {
    const rows = this.db
      .prepare(`${SESSION_SELECT} ORDER BY s.updated_at DESC, s.id DESC LIMIT ?`)
      .all(limit) as SessionRow[];
    return rows.map((row) => ({ ...toSession(row), preview: (row.preview as string | null) ?? null }));
  }

  /** Full-text search over every session's messages, best matches first; `mark` wraps the hit words. */
  search(text: string, options: { limit?: number; mark?: [string, string] } = {}): SearchHit[] {
    const query = toFtsQuery(text);
    if (query === undefined) return [];
    const [open, close] = options.mark ?? ['[', ']'];
    return this.db
      .prepare(
        `SELECT m.session_id, m.position, m.role, snippet(messages_fts, 0, ?, ?, '…', 16) AS snippet, s.title, s.updated_at
         FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid JOIN sessions s ON s.id = m.session_id
         WHERE messages_fts MATCH ? ORDER BY rank LIMIT ?`,
      )
      .all(open, close, query, options.limit ?? 20) as SearchHit[];
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

const SESSION_SELECT = `SELECT s.*,
  (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id) AS message_count,
  (SELECT m.text FROM messages m WHERE m.session_id = s.id AND m.role = 'user' ORDER BY m.position LIMIT 1) AS preview
  FROM sessions s`;

function toSession(row: SessionRow): Session {
  return SessionSchema.parse({
    id: row.id,
    title: row.title,
    created_at: row.created_at,
    updated_at: row.updated_at,
    model: row.model,
    base_url: row.base_url,
    toolsets: JSON.parse(String(row.toolsets)),
    tools: JSON.parse(String(row.tools)),
    sandbox: row.sandbox,
    forked_from: row.forked_from === null ? null : ForkOriginSchema.parse(JSON.parse(String(row.forked_from))),
    usage: JSON.parse(String(row.usage)),
    message_count: row.message_count,
  });
}
