import type { Command } from 'commander';

import type { SetExitStatus } from '../command-output.js';
import { EXIT } from '../exit-status.js';
import type { CliIo } from '../io.js';
import { renderTable, writeAnswer } from '../operator/format.js';
import { operatorCommand, requireKnownTenant, withTarget, type TargetFlags } from '../operator/target-options.js';
import { tenantName } from '../options.js';

/** Registers `quotaplane alerts <tenant>`. */
export function registerAlerts(program: Command, io: CliIo, setExitStatus: SetExitStatus): void {
  operatorCommand(program, 'alerts', io, 'reads')
    .summary("show a tenant's spend-alert thresholds this period: amounts, where they come from, which are crossed")
    .description(
      "Show each spend ceiling of the tenant and of its agents with the thresholds that apply this period:\n" +
        'the settled amount each fires at, whether settled spend has crossed it, and where the thresholds\n' +
        "come from (the agent's own, the tenant's quota, the plane-wide default, or 80 % and 100 %).\n" +
        'Set them with `quota set|update --alert` (80%, tokens=<n>, minorUnits=<n>, none, default) and the default with `quota plane update --alert`.',
    )
    .argument('<tenant>', 'the tenant', tenantName)
    .action(async (tenant: string, flags: TargetFlags) => {
      const status = await withTarget(flags, 'reads', async (target) => {
        await requireKnownTenant(target, tenant);
        const alerts = await target.alerts(tenant);
        writeAnswer(io, flags.json, alerts, () => {
          if (alerts.ceilings.length === 0) return `${tenant} has no spend alerts in ${alerts.period}: no ceiling, and no absolute threshold\n`;
          const rows = alerts.ceilings.flatMap((ceiling) =>
            ceiling.thresholds.map((state) => [
              ceiling.agent === null ? 'tenant' : `agent ${ceiling.agent}`,
              ceiling.unit,
              ceiling.ceiling === null ? 'none' : String(ceiling.ceiling),
              String(ceiling.settled),
              state.label,
              String(state.amount),
              state.crossed ? 'crossed' : 'not yet',
              ceiling.source,
            ]),
          );
          return `${tenant}, period ${alerts.period}\n${renderTable(['CEILING OF', 'UNIT', 'CEILING', 'SETTLED', 'THRESHOLD', 'AT', 'STATE', 'FROM'], rows)}`;
        });
        return EXIT.OK;
      });
      setExitStatus(status);
    });
}
