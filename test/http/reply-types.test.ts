import type { Static } from '@sinclair/typebox';
import { describe, expectTypeOf, it } from 'vitest';

import type { PlaneCeiling as CorePlaneCeiling } from '../../src/core/plane-ceiling.js';
import type { TenantQuota as CoreTenantQuota } from '../../src/core/quota.js';
import type { AuditReply } from '../../src/http/routes/audit.js';
import type { HaltReply, LiftedView, LiftReply } from '../../src/http/routes/halts.js';
import type { CreatedKey, KeyRecord, RotateReply } from '../../src/http/routes/keys.js';
import type { PlaneStatusReply } from '../../src/http/routes/plane.js';
import type { PruneReply } from '../../src/http/routes/prune.js';
import type { SlotsReply } from '../../src/http/routes/slots.js';
import type { RateWindowsReply, SpendHistoryReply } from '../../src/http/routes/spend-history.js';
import type { PassGrant, PlaneCeiling, TenantQuota, Usage } from '../../src/http/schemas/common.js';
import type { AttentionReport, AuditRecord, AuditVerification, Held, LeaseRenewal, ReleaseReply, RunsPage, SettleReply, SweepReply } from '../../src/http/schemas/operator.js';
import type { CreatedApiKey, RotatedApiKey } from '../../src/plane/api-key-admin.js';
import type { LiftedHalt } from '../../src/plane/lifted-halts.js';
import type {
  AttentionReport as PlaneAttentionReport,
  AuditLogPage,
  AuditVerification as PlaneAuditVerification,
  RunsPage as PlaneRunsPage,
  SlotHoldersPage,
  SweepResult,
} from '../../src/plane/operator-types.js';
import type { HaltResult, LiftResult, PlaneStatus, SettleResult, Usage as PlaneUsage } from '../../src/plane/plane.js';
import type { PruneResult } from '../../src/plane/prune-types.js';
import type { RateWindows } from '../../src/plane/rate-windows.js';
import type { SpendHistory } from '../../src/plane/spend-history.js';
import type { ApiKeyRecord } from '../../src/store/api-keys.js';
import type {
  AuditRecord as StoreAuditRecord,
  Held as StoreHeld,
  LeaseRenewal as StoreLeaseRenewal,
  PassGrant as StorePassGrant,
  ReleaseRunOutcome,
} from '../../src/store/types.js';

/*
 * A reply schema serializes only the members it lists; the others are dropped without a word
 * (POST /v1/sweep lost `waiters` that way). So each reply schema's type must have exactly the
 * members of the library type the route answers: a member added to the plane and not to the
 * schema fails the typecheck (`npx tsc --noEmit`), before any request shows it.
 */

// Names, optionality and types of the members, nested; readonly dropped, and an index signature
// read as a record, so only what JSON carries is compared.
type Shape<T> = T extends readonly (infer U)[]
  ? Shape<U>[]
  : T extends object
    ? string extends keyof T
      ? Record<string, Shape<T[string & keyof T]>>
      : { -readonly [K in keyof T]: Shape<T[K]> }
    : T;

describe('reply schemas list every member of the library types they answer', () => {
  it('is checked by the compiler', () => {
    expectTypeOf<Shape<Static<typeof SweepReply>>>().toEqualTypeOf<Shape<SweepResult>>();
    expectTypeOf<Shape<Static<typeof PassGrant>>>().toEqualTypeOf<Shape<StorePassGrant>>();
    expectTypeOf<Shape<Static<typeof Usage>>>().toEqualTypeOf<Shape<PlaneUsage>>();
    expectTypeOf<Shape<Static<typeof SettleReply>>>().toEqualTypeOf<Shape<SettleResult>>();
    expectTypeOf<Shape<Static<typeof ReleaseReply>>>().toEqualTypeOf<Shape<ReleaseRunOutcome>>();
    expectTypeOf<Shape<Static<typeof LeaseRenewal>>>().toEqualTypeOf<Shape<StoreLeaseRenewal>>();
    expectTypeOf<Shape<Static<typeof AttentionReport>>>().toEqualTypeOf<Shape<PlaneAttentionReport>>();
    expectTypeOf<Shape<Static<typeof AuditVerification>>>().toEqualTypeOf<Shape<PlaneAuditVerification>>();
    expectTypeOf<Shape<Static<typeof RunsPage>>>().toEqualTypeOf<Shape<PlaneRunsPage>>();
    expectTypeOf<Shape<Static<typeof Held>>>().toEqualTypeOf<Shape<StoreHeld>>();
    expectTypeOf<Shape<Static<typeof AuditRecord>>>().toEqualTypeOf<Shape<StoreAuditRecord>>();
    expectTypeOf<Shape<Static<typeof AuditReply>>>().toEqualTypeOf<Shape<AuditLogPage>>();
    expectTypeOf<Shape<Static<typeof TenantQuota>>>().toEqualTypeOf<Shape<CoreTenantQuota>>();
    expectTypeOf<Shape<Static<typeof PlaneCeiling>>>().toEqualTypeOf<Shape<CorePlaneCeiling>>();
    expectTypeOf<Shape<Static<typeof PlaneStatusReply>>>().toEqualTypeOf<Shape<PlaneStatus>>();
    expectTypeOf<Shape<Static<typeof HaltReply>>>().toEqualTypeOf<Shape<HaltResult>>();
    expectTypeOf<Shape<Static<typeof LiftReply>>>().toEqualTypeOf<Shape<LiftResult>>();
    expectTypeOf<Shape<Static<typeof LiftedView>>>().toEqualTypeOf<Shape<LiftedHalt>>();
    expectTypeOf<Shape<Static<typeof KeyRecord>>>().toEqualTypeOf<Shape<ApiKeyRecord>>();
    expectTypeOf<Shape<Static<typeof CreatedKey>>>().toEqualTypeOf<Shape<CreatedApiKey>>();
    expectTypeOf<Shape<Static<typeof RotateReply>>>().toEqualTypeOf<Shape<RotatedApiKey>>();
    expectTypeOf<Shape<Static<typeof SlotsReply>>>().toEqualTypeOf<Shape<SlotHoldersPage>>();
    expectTypeOf<Shape<Static<typeof PruneReply>>>().toEqualTypeOf<Shape<PruneResult>>();
    expectTypeOf<Shape<Static<typeof SpendHistoryReply>>>().toEqualTypeOf<Shape<SpendHistory>>();
    expectTypeOf<Shape<Static<typeof RateWindowsReply>>>().toEqualTypeOf<Shape<RateWindows>>();
  });
});
