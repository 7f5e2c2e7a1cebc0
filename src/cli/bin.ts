#!/usr/bin/env node
// The `quotaplane` executable: runs the CLI with the process's own streams and exits with its status.
import { main } from './main.js';

process.exitCode = await main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr });
