// A racer for the cross-process tests in sqlite-races.test.ts: forked as its own OS process, it
// announces itself, waits for the parent's "go" (the barrier that makes the race real), runs its
// share of one scenario against the shared SQLite file, reports every answer and exits.
import { openStore } from '../../src/store/open-store.js';
import { unvalidated } from '../../src/store/validated-store.js';
import type { QuotaStore } from '../../src/store/store.js';

/** What the parent asks one racer to do. */
export interface RaceJob {
  readonly scenario: 'admit' | 'reserve' | 'reserveRate' | 'open';
  readonly url: string;
  readonly tenant: string;
  readonly runs: readonly string[];
  /** Issue this racer's admissions all at once instead of one after another (group commit batches them). */
  readonly concurrent?: boolean;
  /** The agent name every admission of this racer carries (per-agent ceilings). */
  readonly agent?: string;
  /** The budget every admission of this racer declares (default none). */
  readonly budget?: { readonly maxTokens?: number; readonly maxCallTokens?: number };
}

/** What a racer reports: one answer per run (`ok` or the refusal code, with its figure), or the opened schema. */
export interface RaceReport {
  readonly answers: readonly { run: string; answer: string; figure?: number; bound?: string }[];
  readonly appliedMigrations?: number;
}

const job = JSON.parse(process.argv[2] ?? '{}') as RaceJob;
const send = (message: unknown) => new Promise<void>((resolve) => process.send?.(message, () => resolve()));

async function race(store: QuotaStore): Promise<RaceReport> {
  const acme = store.tenant(job.tenant);
  const answers: { run: string; answer: string; figure?: number; bound?: string }[] = [];
  const admission = (run: string) => ({
    run,
    budget: job.budget ?? {},
    width: 1,
    atMs: 1_760_000_000_000,
    leaseMs: 60_000,
    ...(job.agent === undefined ? {} : { agent: { name: job.agent, digest: 'ab'.repeat(32) } }),
  });
  if (job.concurrent === true && job.scenario === 'admit') {
    const outcomes = await Promise.all(
      job.runs.map((run) => acme.admit(admission(run))),
    );
    return { answers: outcomes.map((outcome, index) => (outcome.ok ? { run: job.runs[index] as string, answer: 'ok' } : answerOf(job.runs[index] as string, outcome.refusal))) };
  }
  for (const run of job.runs) {
    if (job.scenario === 'admit') {
      const outcome = await acme.admit(admission(run));
      answers.push(outcome.ok ? { run, answer: 'ok' } : answerOf(run, outcome.refusal));
    } else if (job.scenario === 'reserve') {
      const outcome = await acme.reserve({
        run,
        quota: { period: 'monthly', maxTokensPerPeriod: 1000 },
        hold: { period: '2997-01', amount: { tokens: 100, minorUnits: 0 } },
        atMs: 1_760_000_000_000,
      });
      answers.push(outcome.ok ? { run, answer: 'ok' } : answerOf(run, outcome.refusal));
    } else {
      const outcome = await acme.reserveRate({
        grant: 'tool://race/refund',
        run,
        dispatch: `key-${run}`,
        ceilings: [{ count: 10, windowSeconds: 3600 }],
        atMs: 1_760_000_000_000,
        exempt: false,
      });
      answers.push(outcome.ok ? { run, answer: 'ok' } : answerOf(run, outcome.refusal));
    }
  }
  return { answers };
}

function answerOf(run: string, refusal: { code: string; running?: number; reserved?: number; reached?: number; bound?: string }) {
  const answer = { run, answer: refusal.code, figure: refusal.running ?? refusal.reserved ?? refusal.reached };
  return refusal.bound === undefined ? answer : { ...answer, bound: refusal.bound };
}

process.on('message', (message) => {
  if (message !== 'go') return;
  void (async () => {
    try {
      if (job.scenario === 'open') {
        const store = await openStore(job.url);
        const applied = (unvalidated(store) as { migration?: { applied: readonly unknown[] } }).migration?.applied.length ?? -1;
        await store.close();
        await send({ answers: [], appliedMigrations: applied } satisfies RaceReport);
      } else {
        await send(await race(opened));
        await opened.close();
      }
      process.exit(0);
    } catch (error) {
      await send({ error: error instanceof Error ? `${(error as { code?: string }).code ?? ''} ${error.message}` : String(error) });
      process.exit(1);
    }
  })();
});

// Open before the barrier (except when opening is the race), so the race is on the decisions.
const opened = job.scenario === 'open' ? (undefined as unknown as QuotaStore) : await openStore(job.url);
await send('ready');
