/**
 * The page as the model reads it: Playwright's AI-mode accessibility tree (`ariaSnapshotJSON`,
 * whose refs stay stable for an element while its document lives, and differ between documents)
 * rendered as indented lines, `[ref=e12] button "Submit"`. Compact mode drops the containers
 * that carry neither a name nor text, keeping interactive elements and text; full mode keeps all.
 */

/** A node of `ariaSnapshotJSON({ mode: 'ai' })`: a text fragment or an element. */
export type AriaNode = string | AriaElement;

export interface AriaElement {
  role: string;
  name?: string;
  ref?: string;
  text?: string;
  url?: string;
  placeholder?: string;
  children?: AriaNode[];
  [flag: string]: unknown;
}

const INTERACTIVE = new Set([
  'button',
  'checkbox',
  'combobox',
  'link',
  'listbox',
  'menuitem',
  'menuitemcheckbox',
  'menuitemradio',
  'option',
  'radio',
  'scrollbar',
  'searchbox',
  'slider',
  'spinbutton',
  'switch',
  'tab',
  'textbox',
  'treeitem',
]);

/** Roles that hold no meaning of their own: compact mode shows their children in their place. */
const CONTAINERS = new Set([
  'generic',
  'none',
  'presentation',
  'group',
  'list',
  'section',
  'form',
  'main',
  'region',
  'article',
  'rowgroup',
  'table',
  'row',
  'document',
]);

const FLAGS = ['checked', 'disabled', 'expanded', 'pressed', 'selected', 'level', 'invalid', 'active'] as const;

export interface RenderedSnapshot {
  text: string;
  /** Every ref of the tree, shown or not: actions accept exactly these. */
  refs: Set<string>;
}

function quote(text: string): string {
  return JSON.stringify(text.replace(/\s+/g, ' ').trim());
}

function describe(node: AriaElement): string {
  const parts = [node.ref ? `[ref=${node.ref}] ${node.role}` : node.role];
  if (node.name) parts.push(quote(node.name));
  for (const flag of FLAGS) {
    const value = node[flag];
    if (value === true) parts.push(`[${flag}]`);
    else if (value !== undefined && value !== false) parts.push(`[${flag}=${String(value)}]`);
  }
  if (node.placeholder) parts.push(`[placeholder=${quote(node.placeholder)}]`);
  let line = parts.join(' ');
  if (node.url) line += ` -> ${node.url}`;
  if (node.text) line += `: ${node.text.replace(/\s+/g, ' ').trim()}`;
  return line;
}

function worthShowing(node: AriaElement): boolean {
  if (INTERACTIVE.has(node.role)) return true;
  if (CONTAINERS.has(node.role)) return Boolean(node.name);
  return Boolean(node.name || node.text || node.role === 'img' || node.role === 'heading');
}

function collectRefs(nodes: readonly AriaNode[], refs: Set<string>): void {
  for (const node of nodes) {
    if (typeof node === 'string') continue;
    if (node.ref) refs.add(node.ref);
    if (node.children) collectRefs(node.children, refs);
  }
}

function renderNodes(nodes: readonly AriaNode[], depth: number, full: boolean, lines: string[]): void {
  const indent = '  '.repeat(depth);
  for (const node of nodes) {
    if (typeof node === 'string') {
      const text = node.replace(/\s+/g, ' ').trim();
      if (text) lines.push(`${indent}text: ${text}`);
      continue;
    }
    const shown = full || worthShowing(node);
    if (shown) lines.push(indent + describe(node));
    if (node.children) renderNodes(node.children, shown ? depth + 1 : depth, full, lines);
  }
}

/** Render the tree; `full` keeps every container. */
export function renderSnapshot(nodes: readonly AriaNode[], full = false): RenderedSnapshot {
  const lines: string[] = [];
  renderNodes(nodes, 0, full, lines);
  const refs = new Set<string>();
  collectRefs(nodes, refs);
  return { text: lines.join('\n'), refs };
}

/** Cut a snapshot at a line boundary under `maxChars`, saying how much was left out. */
export function capSnapshot(text: string, maxChars: number): { text: string; cut: boolean } {
  if (text.length <= maxChars) return { text, cut: false };
  const end = text.lastIndexOf('\n', maxChars);
  const kept = text.slice(0, end > 0 ? end : maxChars);
  const hidden = text.slice(kept.length).split('\n').filter(Boolean).length;
  return {
    text: `${kept}\n[snapshot cut: ${hidden} more lines not shown (browser.snapshot_max_chars = ${maxChars})]`,
    cut: true,
  };
}
