#!/usr/bin/env node
import { ConfigError } from './config.ts';
import { start } from './server.ts';

try {
	await start(process.env, { handleSignals: true });
} catch (error) {
	if (error instanceof ConfigError) {
		process.stderr.write(`paypalych-relay: ${error.message}\n`);
		process.exit(2);
	}
	process.stderr.write(
		`paypalych-relay: failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
	);
	process.exit(1);
}
