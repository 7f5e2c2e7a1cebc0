import { Counter, Gauge, type Registry } from 'prom-client';

import type { Plane, PlaneStatus } from '../plane/plane.js';

/**
 * The plane-wide figures of `/metrics`, read from the store on each scrape:
 * - `quotaplane_plane_running_runs{agent}`: slots held across every tenant, `agent=""` all of them,
 *   `agent="<name>"` those of each agent with a plane-wide ceiling;
 * - `quotaplane_plane_max_concurrent_runs{agent}`: the plane-wide ceilings, the same way (absent
 *   when not set).
 * One read of `planeStatus` per scrape serves every gauge. Returns a counter of ceiling refusals,
 * `quotaplane_ceiling_refusals_total{code, bound}` (`TooManyRuns`/`SpentOut` by the ceiling that
 * bound them: agent, tenant, plane-agent, plane), for the metered `admit` to increment.
 */
export function createPlaneMetrics(registry: Registry, prefix: string, plane: Plane): Counter<'code' | 'bound'> {
  let inFlight: Promise<PlaneStatus> | null = null;
  const status = (): Promise<PlaneStatus> => {
    inFlight ??= plane.planeStatus().finally(() => {
      inFlight = null;
    });
    return inFlight;
  };
  // The all-tenant figure carries agent="" (no agent name is empty), which Prometheus reads as the
  // series without the label; a label-free gauge would report 0, a ceiling that admits nothing,
  // while none is set.
  new Gauge({
    name: `${prefix}plane_running_runs`,
    help: 'Runs holding a slot across every tenant, read on scrape: agent="" counts every run, agent="<name>" the runs of an agent with a plane-wide ceiling.',
    labelNames: ['agent'] as const,
    registers: [registry],
    async collect() {
      const figures = await status();
      this.reset();
      if (figures.running !== null) this.set({ agent: '' }, figures.running);
      for (const agent of figures.agents) this.set({ agent: agent.agent }, agent.running);
    },
  });
  new Gauge({
    name: `${prefix}plane_max_concurrent_runs`,
    help: 'The plane-wide ceilings on concurrent runs across every tenant: agent="" for every run, agent="<name>" per agent; absent when not set.',
    labelNames: ['agent'] as const,
    registers: [registry],
    async collect() {
      const figures = await status();
      this.reset();
      if (figures.limit !== null) this.set({ agent: '' }, figures.limit);
      for (const agent of figures.agents) if (agent.limit !== null) this.set({ agent: agent.agent }, agent.limit);
    },
  });
  return new Counter({
    name: `${prefix}ceiling_refusals_total`,
    help: 'TooManyRuns and SpentOut refusals by the ceiling that bound them (agent, tenant, plane-agent, plane).',
    labelNames: ['code', 'bound'] as const,
    registers: [registry],
  });
}
