import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

import { renderTable, terminalSafe } from '../../src/cli/operator/format.js';
import { createPlane } from '../../src/plane/create-plane.js';
import { openStore } from '../../src/store/open-store.js';
import { unvalidated } from '../../src/store/validated-store.js';
import { runCli, temporaryDirectory } from './cli-helpers.js';

describe('quotaplane runs with a lease a Date cannot show', () => {
  it('prints the table (the raw ms for that lease) instead of crashing with exit 70', async () => {
    const dir = temporaryDirectory();
    try {
      const url = `sqlite:${join(dir.path, 'old.db')}`;
      const store = await openStore(url);
      // An older store could hold such a lease: the port bounds leaseMs now (validated()), so the row
      // is written through the adapter underneath, as a store of that time took it.
      await unvalidated(store).tenant('acme').admit({ run: 'run-forever', budget: {}, width: 1, atMs: 1_767_600_000_000, leaseMs: Number.MAX_SAFE_INTEGER - 1_767_600_000_000 });
      await store.close();
      const result = await runCli(['runs', '--store', url]);
      expect(result.stderr).toBe('');
      expect(result.status).toBe(0);
      expect(result.stdout).toContain('run-forever');
      expect(result.stdout).toContain(`${Number.MAX_SAFE_INTEGER}ms`);
    } finally {
      dir.remove();
    }
  });

  it('control and format characters reach the terminal escaped, never raw; a table cell stays on its line', () => {
    const hostile = 'ok \u001b[31mRED\u001b[0m \u001b]0;TITLE\u0007 \u202eevil\u202c \r\noverwrite';
    expect(terminalSafe(hostile, { keepNewlines: false })).toBe('ok \\u001b[31mRED\\u001b[0m \\u001b]0;TITLE\\u0007 \\u202eevil\\u202c \\u000d\\u000aoverwrite');
    expect(terminalSafe('line one\nline two\u001b', { keepNewlines: true })).toBe('line one\nline two\\u001b');
    // Emoji joiners and CJK stay as they are.
    expect(terminalSafe('👩\u200d💻 通知', { keepNewlines: false })).toBe('👩\u200d💻 通知');
    expect(renderTable(['A', 'B'], [['x\ny', 'z']]).split('\n')).toEqual(['A         B', 'x\\u000ay  z', '']);
  });

  it('a halt reason holding escape sequences and line breaks prints escaped in halts, on the one row of its halt', async () => {
    const dir = temporaryDirectory();
    try {
      const url = `sqlite:${join(dir.path, 'hostile.db')}`;
      const store = await openStore(url);
      const plane = createPlane({ store });
      await plane.halt({ tenant: 'acme', scope: 'agent:esc', reason: 'ok \u001b[31mRED\u001b[0m\r\nforged row', by: { actor: 'ops', basis: 'asserted' }, newTenant: true });
      await store.close();
      const result = await runCli(['halts', '--tenant', 'acme', '--store', url]);
      expect(result.status).toBe(0);
      expect(result.stdout).not.toMatch(/[\u001b\r]/);
      expect(result.stdout).toContain('ok \\u001b[31mRED\\u001b[0m\\u000d\\u000aforged row');
      expect(result.stdout.trimEnd().split('\n')).toHaveLength(2);
    } finally {
      dir.remove();
    }
  });
});
