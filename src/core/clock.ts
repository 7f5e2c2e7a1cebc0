/**
 * Where the plane reads "now": integer Unix milliseconds. `core` and `store` never read a clock
 * (every instant below the plane is an `atMs` argument); the plane takes a `Clock` so tests and
 * replay drive virtual time (docs/design/architecture.md, "The layers"). The wall clock lives in
 * `plane/system-clock.ts`.
 */
export interface Clock {
  /** The current instant, integer Unix milliseconds. */
  nowMs(): number;
}
