/** Names that look like credentials: none of them may reach a tool command. */
const SECRET_NAME = /(_API_KEY|_TOKEN|_SECRET|PASSWORD)$|^HF_TOKEN$|^API_KEY$/i;

export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/** A copy of `env` without credential-like variables, even ones a caller passed on purpose. */
export function scrubEnvironment(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && !isSecretName(name)) out[name] = value;
  }
  return out;
}
