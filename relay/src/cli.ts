import { BackupError, backupStore } from './backup.ts';
import { ConfigError, StartupError, TARGET_VARIABLES, variableHelp } from './config.ts';
import { RELAY_VERSION } from './metrics.ts';
import { start } from './server.ts';

const USAGE = `Usage: paypalych-relay [--help | --version]
       paypalych-relay backup FILE

Receives PayPalych postbacks and redirects, verifies and stores them, and forwards them to n8n
webhooks until they are delivered. Configured by environment variables only; a RELAY_* or
PAYPALYCH_* variable the relay does not know is refused, and so is any other one letter from
a variable it reads (PROT, LOG_LEVL).

backup FILE copies the SQLite store RELAY_DATABASE names into FILE while the relay runs (a new
file; a relay started on it delivers what was pending). A PostgreSQL store: pg_dump.`;

/** The --help text: what must be set, then every variable of the schema with its default. */
export function helpText(env: Record<string, string | undefined> = process.env): string {
	const variables = variableHelp(env);
	const width = Math.max(...variables.map((v) => v.name.length));
	const lines = variables.map((v) => {
		const marks = [v.required, v.default === undefined ? undefined : `default: ${v.default}`];
		return `  ${v.name.padEnd(width)}  ${v.description} [${marks.filter(Boolean).join('; ')}]`;
	});
	const required = variables.filter((v) => v.required === 'required').map((v) => v.name);
	return `${USAGE}

Required: ${required.join(', ')}, and at least one of ${TARGET_VARIABLES.join(', ')}.

Environment variables:
${lines.join('\n')}

Version ${RELAY_VERSION}. Documentation: https://github.com/n8n-nodes-paypalych/n8n-nodes-paypalych/tree/main/relay
`;
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
	if (argv[0] === 'backup') {
		await backupCommand(argv.slice(1));
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

/** `paypalych-relay backup FILE`: a consistent copy of the SQLite store, taken while it runs. */
async function backupCommand(args: string[]): Promise<void> {
	const database = process.env.RELAY_DATABASE;
	if (args.length !== 1 || !database) {
		process.stderr.write(
			`paypalych-relay backup: ${args.length !== 1 ? 'name one new FILE: paypalych-relay backup FILE' : 'set RELAY_DATABASE to the store to back up'}\n`,
		);
		process.exit(2);
	}
	try {
		const { pages } = await backupStore(database, args[0]);
		process.stdout.write(
			`paypalych-relay: backed up ${database} to ${args[0]} (${pages} pages). To restore: stop the relay, put the copy where RELAY_DATABASE points (or point RELAY_DATABASE at it), start the relay; it delivers what was pending.\n`,
		);
	} catch (error) {
		if (!(error instanceof BackupError)) throw error;
		process.stderr.write(`paypalych-relay backup: ${error.message}\n`);
		process.exit(2);
	}
}
