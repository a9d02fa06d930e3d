/**
 * Text from a model or a tool made safe to print on a terminal: every control character but
 * newline and tab (ESC, BEL, carriage return, C1 controls, DEL) is shown as a visible `\xNN`
 * escape, so a reply cannot move the cursor, retitle the window, clear the screen or hide text.
 */
export function printable(text: string): string {
  return text.replace(
    /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g,
    (character) => `\\x${character.charCodeAt(0).toString(16).padStart(2, '0')}`,
  );
}
