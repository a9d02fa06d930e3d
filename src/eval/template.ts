/**
 * `{{field}}` placeholders filled from an item (dot paths reach nested fields: `{{order.id}}`).
 * A YAML environment's prompt, expected values, sandbox commands and simulated-user persona are
 * templates; items are checked when read, so a missing field names the dataset line, not a rollout.
 */

const PLACEHOLDER = /\{\{\s*([A-Za-z_][\w-]*(?:\.[\w-]+)*)\s*\}\}/g;

/** The field paths a template names, in order of first use. */
export function templateFields(template: string): string[] {
  return [...new Set([...template.matchAll(PLACEHOLDER)].map((match) => match[1]!))];
}

/** The value at a dot path, or undefined. */
export function fieldValue(item: unknown, path: string): unknown {
  let value: unknown = item;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/**
 * The template with each placeholder replaced by the item's value (strings as they are, other
 * values as JSON). A placeholder the item lacks is an error naming the template's place.
 */
export function renderTemplate(template: string, item: unknown, where: string): string {
  return template.replace(PLACEHOLDER, (_whole, path: string) => {
    const value = fieldValue(item, path);
    if (value === undefined || value === null)
      throw new Error(`${where}: the item has no field '${path}' (named as {{${path}}})`);
    return typeof value === 'string' ? value : JSON.stringify(value);
  });
}
