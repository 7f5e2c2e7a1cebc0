// A small client of the V8 inspector protocol, enough to measure another Node process started with
// `--inspect`: force a full garbage collection, read `process.memoryUsage()`, and write a heap
// snapshot. It speaks over undici's WebSocket (Node 20 has no global one).
import { createWriteStream } from 'node:fs';

import { WebSocket } from 'undici';

/** `process.memoryUsage()` of the inspected process, in bytes. */
export interface MemoryUsage {
  readonly rss: number;
  readonly heapTotal: number;
  readonly heapUsed: number;
  readonly external: number;
  readonly arrayBuffers: number;
}

/** A connection to one inspected process. */
export interface Inspector {
  /** Two full collections (the second catches what the first's finalizers freed), then `process.memoryUsage()`. */
  memoryAfterGc(): Promise<MemoryUsage>;
  /** `process.memoryUsage()` as it stands, without collecting. */
  memory(): Promise<MemoryUsage>;
  /** Writes a heap snapshot (after a full collection) to `path`, for Chrome DevTools' Memory tab. */
  heapSnapshot(path: string): Promise<void>;
  close(): void;
}

interface Reply {
  readonly id?: number;
  readonly method?: string;
  readonly params?: { readonly chunk?: string };
  readonly result?: { readonly result?: { readonly value?: unknown } };
  readonly error?: { readonly message: string };
}

/** Connects to the inspector at `url` (`ws://127.0.0.1:9229/<uuid>`, as the process prints it). */
export async function connectInspector(url: string): Promise<Inspector> {
  const socket = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener('open', () => resolve(), { once: true });
    socket.addEventListener('error', () => reject(new Error(`cannot reach the inspector at ${url}`)), { once: true });
  });
  let nextId = 1;
  const pending = new Map<number, { resolve: (reply: Reply) => void; reject: (error: Error) => void }>();
  let onChunk: ((chunk: string) => void) | null = null;
  socket.addEventListener('message', (event) => {
    const reply = JSON.parse(String(event.data)) as Reply;
    if (reply.method === 'HeapProfiler.addHeapSnapshotChunk' && onChunk !== null) onChunk(reply.params?.chunk ?? '');
    if (reply.id === undefined) return;
    const waiter = pending.get(reply.id);
    pending.delete(reply.id);
    if (reply.error !== undefined) waiter?.reject(new Error(reply.error.message));
    else waiter?.resolve(reply);
  });
  socket.addEventListener('close', () => {
    for (const waiter of pending.values()) waiter.reject(new Error('the inspected process went away'));
    pending.clear();
  });

  const send = (method: string, params: Record<string, unknown> = {}): Promise<Reply> =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      socket.send(JSON.stringify({ id, method, params }));
    });
  const memory = async (): Promise<MemoryUsage> => {
    const reply = await send('Runtime.evaluate', { expression: 'JSON.stringify(process.memoryUsage())', returnByValue: true });
    return JSON.parse(String(reply.result?.result?.value)) as MemoryUsage;
  };
  const collect = async () => {
    await send('HeapProfiler.collectGarbage');
    await send('HeapProfiler.collectGarbage');
  };

  return {
    memory,
    async memoryAfterGc() {
      await collect();
      return memory();
    },
    async heapSnapshot(path) {
      await collect();
      const file = createWriteStream(path);
      onChunk = (chunk) => file.write(chunk);
      try {
        await send('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
      } finally {
        onChunk = null;
        await new Promise<void>((resolve, reject) => file.end((error?: Error | null) => (error ? reject(error) : resolve())));
      }
    },
    close: () => socket.close(),
  };
}
