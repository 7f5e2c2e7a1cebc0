-- Placeholder for version 2, written on another branch in parallel; this file is dropped when the
-- branches merge (version numbers run without a gap, scripts/build-sql.mjs). It changes nothing.
SELECT 1;
