import { ConfigError, StartupError, variableHelp } from './config.ts';
import { RELAY_VERSION } from './metrics.ts';
import { start } from './server.ts';

const USAGE = `Usage: paypalych-relay [--help | --version]

Receives PayPalych postbacks and redirects, verifies and stores them, and forwards them to n8n
webhooks until they are delivered. Configured by environment variables only; a RELAY_* or
PAYPALYCH_* variable the relay does not know is refused.`;

/** The --help text: every variable of the configuration schema with its default. */
export function helpText(): string {
	const variables = variableHelp();
	const width = Math.max(...variables.map((v) => v.name.length));
	const lines = variables.map((v) => {
		const fallback = v.default === undefined ? 'required' : `default: ${v.default}`;
		return `  ${v.name.padEnd(width)}  ${v.description} [${fallback}]`;
	});
	return `${USAGE}\n\nEnvironment variables:\n${lines.join('\n')}\n\nVersion ${RELAY_VERSION}. Documentation: https://github.com/n8n-nodes-paypalych/n8n-nodes-paypalych/tree/main/relay\n`;
}

/** Runs the command line: --help, --version, or the relay itself. */
export async function main(argv: string[]): Promise<void> {
	if (argv.includes('--help') || argv.includes('-h')) {
		process.stdout.write(helpText());
		return;
	}
	if (argv.includes('--version') || argv.includes('-v')) {
		process.stdout.write(`${RELAY_VERSION}\n`);
		return;
	}
	if (argv.length > 0) {
		process.stderr.write(
			`paypalych-relay: unknown argument ${argv[0]}; the relay is configured by environment variables (see paypalych-relay --help)\n`,
		);
		process.exit(2);
	}
	try {
		await start(process.env, { handleSignals: true });
	} catch (error) {
		if (error instanceof ConfigError) {
			process.stderr.write(`paypalych-relay: ${error.message}\n`);
			process.exit(2);
		}
		if (error instanceof StartupError) {
			process.stderr.write(`paypalych-relay: cannot start: ${error.message}\n`);
			process.exit(1);
		}
		process.stderr.write(
			`paypalych-relay: failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
		);
		process.exit(1);
	}
}
