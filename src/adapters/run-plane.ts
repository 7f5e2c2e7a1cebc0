import type {
  AdmitInput,
  AdmitResult,
  DispatchInput,
  DispatchResult,
  HeartbeatInput,
  HeartbeatResult,
  ResumeInput,
  ResumeResult,
  SettleInput,
  SettleResult,
} from '../plane/plane.js';

/**
 * The five verbs of a run's lifecycle that `withRun` and the SDK adapters call: `admit` (or
 * `resume`), `heartbeat`, `dispatch` and `settle`, with the plane's own shapes. Both the
 * in-process plane (`createPlane`) and the HTTP client (`createClient` from `quotaplane/client`)
 * satisfy it as they are, so the same agent code runs in process or against `quotaplane serve` by
 * swapping the object. Any other object with these methods (a test double, a proxy) works too.
 */
export interface RunPlane {
  admit(input: AdmitInput): Promise<AdmitResult>;
  resume(input: ResumeInput): Promise<ResumeResult>;
  heartbeat(input: HeartbeatInput): Promise<HeartbeatResult>;
  dispatch(input: DispatchInput): Promise<DispatchResult>;
  settle(input: SettleInput): Promise<SettleResult>;
}
