#!/usr/bin/env node
// The `quotaplane` executable: runs the CLI with the process's own streams and exits with its status.
import { main } from './main.js';

// A reader that stops reading (`quotaplane runs | head -1`) closes the pipe: end quietly with the
// status decided so far instead of a stack trace.
const endQuietlyOnClosedPipe = (error: NodeJS.ErrnoException): void => {
  if (error.code === 'EPIPE') process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
  throw error;
};
process.stdout.on('error', endQuietlyOnClosedPipe);
process.stderr.on('error', endQuietlyOnClosedPipe);

// Exit as soon as the command is done: a store that hung (a frozen database server) must not keep
// a stopped server's process alive through sockets it could not close. Writes to pipes, files and
// terminals are synchronous on Linux, so nothing written is lost.
process.exit(await main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr }));
