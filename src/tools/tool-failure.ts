/** Thrown by a tool to fail with a message and a hint for the model (no stack, no "failed:" prefix). */
export class ToolFailure extends Error {
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'ToolFailure';
  }
}
