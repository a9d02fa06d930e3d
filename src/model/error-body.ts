/**
 * vLLM (and servers modelled on it) answer errors as `{"object": "error", "message": …}` with no
 * `error` envelope; the openai client reads only `body.error`, so their words were lost and a
 * context overflow read "400 status code (no body)". This wraps such a body in the OpenAI
 * envelope before the client sees it; other responses pass through untouched.
 */
export function withErrorEnvelope(fetchImpl: typeof fetch): typeof fetch {
  return async (input, init) => {
    const response = await fetchImpl(input, init);
    if (response.status < 400 || !response.headers.get('content-type')?.includes('json')) return response;
    const text = await response.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    const bare = body as { error?: unknown; message?: unknown } | undefined;
    const wrapped =
      bare && typeof bare === 'object' && bare.error === undefined && typeof bare.message === 'string'
        ? JSON.stringify({ error: bare })
        : text;
    const headers = new Headers(response.headers);
    headers.delete('content-length');
    return new Response(wrapped, { status: response.status, statusText: response.statusText, headers });
  };
}
