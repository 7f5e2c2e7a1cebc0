import { alertsSection } from './alerts-section.js';
import { modelCallsSection } from './model-calls-section.js';
import type { BenchSection } from './bench-types.js';
import { httpSection } from './http-section.js';
import { postgresSection } from './postgres-section.js';
import { sqliteSection } from './sqlite-section.js';
import { sqliteConcurrencySection } from './sqlite-concurrency-section.js';
import { sqliteRateWindowSection } from './sqlite-rate-window-section.js';
import { sqliteServiceSection } from './sqlite-service-section.js';
import { pruneSection } from './prune-section.js';
import { sweepLatenessSection } from './sweep-lateness-section.js';

/**
 * Every section `npm run bench` runs, in order. A backend adds its own section file and one entry
 * here; `--only <name>` runs one of them.
 */
export const SECTIONS: readonly BenchSection[] = [
  sqliteSection,
  postgresSection,
  httpSection,
  sqliteConcurrencySection,
  sqliteRateWindowSection,
  sqliteServiceSection,
  pruneSection,
  sweepLatenessSection,
  alertsSection,
  modelCallsSection,
];
