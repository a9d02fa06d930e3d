import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { MessageSchema, type Message } from '../model/messages.js';
import { trajHome } from '../util/paths.js';

/**
 * Read-only listing of chat sessions (TRAJ_HOME/sessions.sqlite, written by src/chat/). The viewer
 * sits below chat in the layering, so it reads the two tables it needs directly:
 * `sessions` (id, title, updated_at, model, toolsets) and `messages` (session_id, position,
 * role, message JSON, text).
 */

export interface SessionListing {
  id: string;
  title: string | null;
  updated_at: string;
  model: string;
  toolsets: string[];
  messages: number;
  preview: string | null;
}

export function defaultSessionsPath(): string {
  return join(trajHome(), 'sessions.sqlite');
}

export class SessionReader {
  private readonly db: Database.Database | undefined;

  constructor(readonly path: string = defaultSessionsPath()) {
    if (!existsSync(path)) return;
    try {
      this.db = new Database(path, { readonly: true, fileMustExist: true });
      this.db.prepare('SELECT 1 FROM sessions LIMIT 1').get();
    } catch {
      this.db?.close();
      this.db = undefined;
    }
  }

  get available(): boolean {
    return this.db !== undefined;
  }

  count(): number {
    return this.db ? (this.db.prepare('SELECT COUNT(*) FROM sessions').pluck().get() as number) : 0;
  }

  /** Most recently updated first. */
  list(limit = 200): SessionListing[] {
    return this.select('ORDER BY s.updated_at DESC, s.id DESC LIMIT ?', limit);
  }

  private select(tail: string, ...parameters: unknown[]): SessionListing[] {
    if (!this.db) return [];
    const rows = this.db
      .prepare(
        `SELECT s.id, s.title, s.updated_at, s.model, s.toolsets,
          (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id) AS messages,
          (SELECT substr(m.text, 1, 160) FROM messages m WHERE m.session_id = s.id AND m.role = 'user' ORDER BY m.position LIMIT 1) AS preview
         FROM sessions s ${tail}`,
      )
      .all(...parameters) as (Omit<SessionListing, 'toolsets'> & { toolsets: string })[];
    return rows.map((row) => ({ ...row, toolsets: safeList(row.toolsets) }));
  }

  get(id: string): { session: SessionListing; messages: Message[] } | undefined {
    if (!this.db) return undefined;
    const [session] = this.select('WHERE s.id = ?', id);
    if (!session) return undefined;
    const texts = this.db
      .prepare('SELECT message FROM messages WHERE session_id = ? ORDER BY position')
      .pluck()
      .all(id) as string[];
    const messages = texts.flatMap((text) => {
      const parsed = MessageSchema.safeParse(JSON.parse(text));
      return parsed.success ? [parsed.data] : [];
    });
    return { session, messages };
  }

  close(): void {
    if (this.db?.open) this.db.close();
  }
}

function safeList(text: string): string[] {
  try {
    const value = JSON.parse(text) as unknown;
    return Array.isArray(value) ? value.map(String) : [];
  } catch {
    return [];
  }
}
