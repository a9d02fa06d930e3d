/** A model call being retried, as the progress line shows it: the server's status and message. */
export function retryText(failure: { status?: number; message: string }): string {
  return failure.status === undefined ? failure.message : `HTTP ${failure.status}: ${failure.message}`;
}
