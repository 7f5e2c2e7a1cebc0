import type { CallCeiling, CallCeilings } from './call-ceilings.js';

/** Who a model call is made for: the model called, and optionally the agent calling and the end user it serves. */
export interface CallParties {
  readonly model: string;
  readonly agent?: string | undefined;
  readonly endUser?: string | undefined;
}

/** A ceiling that covers a call, with the subject whose meter it counts. */
export interface CoveringCeiling {
  readonly subject: string;
  readonly ceiling: CallCeiling;
}

/** The meter subject of the whole tenant. */
export const TENANT_SUBJECT = 'tenant';

/**
 * Every meter a call counts on (docs/design/rules.md#m1), in this order: the tenant, the agent,
 * the model, each group listing the model (in the order the groups were configured), the end user.
 * A call counts on each whether or not it has ceilings now, so a ceiling added later finds the
 * usage already there (docs/design/rules.md#m9).
 */
export function callSubjects(config: CallCeilings, parties: CallParties): string[] {
  const subjects = [TENANT_SUBJECT];
  if (parties.agent !== undefined) subjects.push(`agent:${parties.agent}`);
  subjects.push(`model:${parties.model}`);
  for (const [name, group] of Object.entries(config.groups ?? {})) {
    if (group.models.includes(parties.model)) subjects.push(`group:${name}`);
  }
  if (parties.endUser !== undefined) subjects.push(`user:${parties.endUser}`);
  return subjects;
}

/** The ceilings configured for one subject: an end user's override replaces the default per-user ceilings. */
export function subjectCeilings(config: CallCeilings, subject: string): readonly CallCeiling[] {
  if (subject === TENANT_SUBJECT) return config.tenant ?? [];
  const colon = subject.indexOf(':');
  const kind = subject.slice(0, colon);
  const name = subject.slice(colon + 1);
  const own = <T>(record: Readonly<Record<string, T>> | undefined): T | undefined => (record !== undefined && Object.hasOwn(record, name) ? record[name] : undefined);
  switch (kind) {
    case 'agent':
      return own(config.agents) ?? [];
    case 'model':
      return own(config.models) ?? [];
    case 'group':
      return own(config.groups)?.ceilings ?? [];
    case 'user':
      return own(config.endUsers?.overrides) ?? config.endUsers?.default ?? [];
    default:
      return [];
  }
}

/** Every ceiling covering a call on `subjects`, subject by subject in their order, each in its configured order. */
export function coveringCeilings(config: CallCeilings, subjects: readonly string[]): CoveringCeiling[] {
  const covering: CoveringCeiling[] = [];
  for (const subject of subjects) {
    for (const ceiling of subjectCeilings(config, subject)) covering.push({ subject, ceiling });
  }
  return covering;
}
