/**
 * Why `serve` could not listen, as a sentence naming the address and what to do, or `null` when
 * `error` is not one of the operational listen faults (a busy port, an address this machine does
 * not have or cannot resolve, a port it may not bind). These are the operator's environment, not
 * a bug in quotaplane, so `serve` exits 4 with this message instead of 70.
 */
export function listenFailureMessage(error: unknown, host: string, port: number): string | null {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  switch (code) {
    case 'EADDRINUSE':
      return `port ${port} is in use on ${host}; pass --port (or QUOTAPLANE_PORT) or stop the other server`;
    case 'EADDRNOTAVAIL':
      return `address ${host} is not one of this machine's; pass --host with a local address (127.0.0.1, 0.0.0.0)`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `host ${host} could not be resolved; pass --host with an address or a name this machine resolves`;
    case 'EACCES':
      return `port ${port} on ${host} may not be bound by this user; pass --port with a port above 1023`;
    default:
      return null;
  }
}
