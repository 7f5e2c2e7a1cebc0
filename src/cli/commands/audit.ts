import { Option, type Command } from 'commander';

import { AUDIT_ACTIONS } from '../../core/audit-actions.js';
import type { SetExitStatus } from '../command-output.js';
import { EXIT } from '../exit-status.js';
import type { CliIo } from '../io.js';
import { printTenantListing } from '../operator/across-tenants.js';
import { instant } from '../../core/instant.js';
import { operatorText, writeAnswer } from '../operator/format.js';
import { limitOption, operatorCommand, requireKnownTenant, tenantsOf, withTarget, type TargetFlags } from '../operator/target-options.js';
import { tenantName } from '../options.js';

interface AuditFlags extends TargetFlags {
  readonly tenant?: string;
  readonly action?: string;
  readonly limit: number;
  readonly verify: boolean;
}

/** Registers `quotaplane audit [--tenant T] [--action A] [--limit N] [--verify]`. */
export function registerAudit(program: Command, io: CliIo, setExitStatus: SetExitStatus): void {
  operatorCommand(program, 'audit', io, 'reads')
    .summary('list the audit log, or --verify its hash chains (exit 1 when a row does not match)')
    .description(
      'List the audit log (newest first): every halt, lift, quota change, plane-wide ceiling change,\n' +
        'operator release and settle, API key change and prune, with who, when and what changed.\n' +
        'With --verify, recompute every tenant\'s SHA-256 hash chain and name the first row that\n' +
        'does not match (exit status 1).',
    )
    .addOption(new Option('--tenant <tenant>', 'one tenant (default: every tenant)').argParser(tenantName))
    .addOption(new Option('--action <action>', 'only rows of this action').choices(AUDIT_ACTIONS))
    .addOption(limitOption())
    .addOption(new Option('--verify', "recompute the hash chains instead of listing rows").default(false))
    .action(async (flags: AuditFlags) => {
      const status = await withTarget(flags, 'reads', async (target) => {
        if (flags.verify) {
          if (flags.tenant !== undefined) await requireKnownTenant(target, flags.tenant, { auditChains: true });
          const verification = await target.verifyAudit({ tenant: flags.tenant });
          writeAnswer(io, flags.json, verification, () => {
            if (verification.tenants.length === 0) return 'no audit rows to verify\n';
            return `${verification.tenants
              .map((tenant) =>
                tenant.ok
                  ? `${tenant.tenant}: ${tenant.rows} row(s) verified`
                  : `${tenant.tenant}: row ${tenant.firstMismatch?.seq} fails (${tenant.firstMismatch?.problem}): ${tenant.firstMismatch?.message}`,
              )
              .join('\n')}\n`;
          });
          return verification.ok ? EXIT.OK : EXIT.FINDING;
        }
        const truncated = await printTenantListing(io, flags.json, {
          tenants: await tenantsOf(target, flags.tenant, { auditChains: true }),
          limit: flags.limit,
          fetch: async (tenant, want) => {
            const page = await target.auditLog({ tenant, limit: want, action: flags.action });
            return { items: page.rows, truncated: page.truncated };
          },
          member: 'rows',
          empty: 'no audit rows',
          header: ['TENANT', 'SEQ', 'AT', 'ACTION', 'SUBJECT', 'BY', 'DETAIL'],
          row: (row) => [row.tenant, String(row.seq), instant(row.atMs), row.action, row.subject, operatorText(row.by), JSON.stringify(row.detail)],
        });
        return truncated ? EXIT.TRUNCATED : EXIT.OK;
      });
      setExitStatus(status);
    });
}
