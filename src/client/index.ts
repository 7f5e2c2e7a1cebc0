// The `quotaplane/client` entry: a typed HTTP client with the plane's shape
// (docs/guides/operating.md#the-client). Listed name by name, like the package entry.
export {
  createClient,
  type ClientDeleteTenantInput,
  type ClientHaltInput,
  type ClientLiftInput,
  type ClientPlaneHaltInput,
  type ClientPlaneLiftInput,
  type ClientOptions,
  type PlaneVerbs,
  type QuotaplaneClient,
} from './create-client.js';
export { decodeProblem, type DecodedProblem } from './problem-decoding.js';
export { CLIENT_MAX_WAIT_MS } from './create-client.js';
