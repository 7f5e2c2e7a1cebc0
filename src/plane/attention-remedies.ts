import { PLANE_HALT_KEY } from '../core/halt-scope.js';
import type { PassRecord, RunSummary } from '../store/types.js';
import type { Remedy } from './operator-types.js';

/*
 * The commands that end each attention condition, as a person types them: the
 * `quotaplane` CLI (store or server flags left out, as the person's own, and so is the `--actor` a
 * write names when it goes to a store rather than a server) and the HTTP API, each
 * `METHOD /path` followed by its JSON body when it needs one. Placeholders in `<…>` are what only
 * the person knows, such as what a dead pass really spent. Tests send every one of these lines,
 * filled in, to the routes and the CLI, so the text and the surfaces cannot drift apart.
 */

const path = (value: string): string => encodeURIComponent(value);

function settleCommands(tenant: string, run: string, epoch: number): { cli: string; http: string } {
  return {
    cli: `quotaplane settle ${run} --tenant ${tenant} --epoch ${epoch} --tokens <tokens> --minor-units <minorUnits> [--conclude]`,
    http:
      `POST /v1/tenants/${path(tenant)}/runs/${path(run)}/settle ` +
      `{"epoch":${epoch},"spend":{"tokens":<tokens>,"minorUnits":<minorUnits>},"concludes":<true|false>}`,
  };
}

function releaseCommands(tenant: string, run: string): { cli: string; http: string } {
  return {
    cli: `quotaplane release ${run} --tenant ${tenant}`,
    http: `POST /v1/tenants/${path(tenant)}/runs/${path(run)}/release`,
  };
}

// A runner route: the body names the tenant, so an operator key of every tenant can send it as is.
function resumeRequest(tenant: string, run: string): string {
  return `POST /v1/runs/${path(run)}/resume ${JSON.stringify({ tenant })}`;
}

/** `run.stranded`: settle what the dead pass really spent, or release the run. */
export function strandedRemedy(tenant: string, run: RunSummary): Remedy {
  const settle = settleCommands(tenant, run.run, run.lastEpoch);
  const release = releaseCommands(tenant, run.run);
  return {
    text:
      `settle pass ${run.lastEpoch} with what it really spent (concluding it if the work is over), ` +
      `or release the run to give back any spend it holds; a runner may also resume it`,
    cli: [settle.cli, release.cli],
    http: [settle.http, release.http],
  };
}

/** `run.withheld`: lift the subject halt and resume, or abandon (release) the run. */
export function withheldRemedy(tenant: string, run: string, halt: string | null): Remedy {
  const release = releaseCommands(tenant, run);
  const resume = resumeRequest(tenant, run);
  if (halt === null) {
    return {
      text: 'the halt was lifted: resume the run, or release it to abandon it',
      cli: [release.cli],
      http: [resume, release.http],
    };
  }
  if (halt === PLANE_HALT_KEY) {
    return {
      text: 'lift the plane-wide halt and resume the run, or release it to abandon it',
      cli: ['quotaplane lift plane', release.cli],
      http: ['POST /v1/plane/halt/lift {}', resume, release.http],
    };
  }
  return {
    text: `restore the authority (lift ${halt}) and resume the run, or release it to abandon it`,
    cli: [`quotaplane lift ${halt} --tenant ${tenant}`, release.cli],
    http: [`POST /v1/tenants/${path(tenant)}/halts/lift {"scope":${JSON.stringify(halt)}}`, resume, release.http],
  };
}

/** `hold.stale`: resume and conclude the run, or release it. */
export function staleHoldRemedy(tenant: string, run: string): Remedy {
  const release = releaseCommands(tenant, run);
  return {
    text: 'resume the run and conclude it, or release it to give the hold back',
    cli: [release.cli],
    http: [resumeRequest(tenant, run), release.http],
  };
}

/** `pass.unsettled`: settle that pass. */
export function unsettledPassRemedy(tenant: string, pass: PassRecord): Remedy {
  const settle = settleCommands(tenant, pass.run, pass.epoch);
  return {
    text: `settle pass ${pass.epoch} with what it really spent (0 if it spent nothing), so its period is booked`,
    cli: [settle.cli],
    http: [settle.http],
  };
}
