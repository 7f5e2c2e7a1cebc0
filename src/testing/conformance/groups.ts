import { admitHaltsFirst, admitHolds, admitIdempotent, admitReadsQuota, admitRetryFromBooks } from './admit.js';
import { agentCeilings, ceilingRaces, planeWideCeiling } from './ceilings.js';
import { closedStore } from './closing.js';
import { quotaAndAudit, tenantListing } from './config.js';
import { dispatchCeilings } from './dispatch.js';
import { conditionalLift, haltsPerScope } from './halts.js';
import { tenantIsolation } from './isolation.js';
import { appliedInstants } from './applied-instants.js';
import { leaseRenewal, subjectHaltsReachRunningWork } from './leases.js';
import { haltsReachRunningWork, planeWideHalt } from './halts-reach.js';
import { operatorActs, operatorListings } from './operator.js';
import { resumePasses, settlePasses } from './passes.js';
import { lifecycleRaces, rateRace, slotRace, spendRace } from './races.js';
import {
  fullWindowRefuses,
  narrowWindowKeepsWideRows,
  windowEdges,
  ratePerTenant,
  sameCallCountsPerRun,
  uncountableWindows,
  undoIsCounted,
  windowBoundary,
} from './rate.js';
import { overrunsReported } from './overrun.js';
import { pruneClosedRuns } from './retention.js';
import { periodKindsLossless } from './period-kinds.js';
import { batterySelfTest } from './self-test.js';
import { concurrencyGuards, reserveRules, retriedReserve, zeroAndFullCeiling } from './slots.js';
import { amountsSaturate, holdsFillAPeriod, periodGuards, receiptsSettleOnce } from './spend.js';
import { sweepLapsedLeases } from './sweep.js';
import { tenantDeletion } from './tenant-deletion.js';
import { spendAlerts } from './events.js';
import { modelCallCoverage, modelCallPeriods, modelCallWindows } from './model-calls.js';
import type { ConformanceGroup } from './types.js';
import { waitingAdmissions } from './waiting.js';
import { lapsedGrants } from './waiting-lapsed.js';
import { fairWaiting } from './waiting-fairness.js';

/**
 * The whole conformance battery (case ids as in docs/design/rules.md), in this order: the store
 * primitives (C1–C43, G1–G5, the port rules P1–P9, the slot race X1), then the run lifecycle,
 * configuration, audit log, tenant isolation and closing of the port (L1–L41), then leases, the
 * sweep and the operator listings and acts (L42–L64), then the plane-wide and per-agent ceilings
 * (K1–K14). Each group runs on its own fresh store; its steps run in order on that store. Every
 * backend must pass all of it unchanged.
 */
export const conformanceGroups: readonly ConformanceGroup[] = Object.freeze([
  zeroAndFullCeiling,
  retriedReserve,
  concurrencyGuards,
  reserveRules,
  receiptsSettleOnce,
  holdsFillAPeriod,
  periodGuards,
  amountsSaturate,
  periodKindsLossless,
  overrunsReported,
  spendAlerts,
  modelCallWindows,
  modelCallCoverage,
  modelCallPeriods,
  haltsPerScope,
  conditionalLift,
  fullWindowRefuses,
  sameCallCountsPerRun,
  windowBoundary,
  undoIsCounted,
  narrowWindowKeepsWideRows,
  uncountableWindows,
  ratePerTenant,
  windowEdges,
  rateRace,
  spendRace,
  slotRace,
  batterySelfTest,
  admitHaltsFirst,
  admitHolds,
  admitReadsQuota,
  admitIdempotent,
  admitRetryFromBooks,
  resumePasses,
  settlePasses,
  dispatchCeilings,
  quotaAndAudit,
  tenantListing,
  tenantDeletion,
  tenantIsolation,
  leaseRenewal,
  appliedInstants,
  subjectHaltsReachRunningWork,
  haltsReachRunningWork,
  planeWideHalt,
  sweepLapsedLeases,
  operatorListings,
  operatorActs,
  lifecycleRaces,
  waitingAdmissions,
  lapsedGrants,
  fairWaiting,
  planeWideCeiling,
  agentCeilings,
  ceilingRaces,
  pruneClosedRuns,
  closedStore,
]);
