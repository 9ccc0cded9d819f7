import { existsSync } from 'node:fs';
import { DatabaseSync, backup } from 'node:sqlite';
import { isPostgresUrl } from './config-fields.ts';

/** Why a backup was not taken: a message for the operator, and the exit code. */
export class BackupError extends Error {}

/**
 * A consistent copy of the relay's SQLite store, taken while the relay runs: SQLite's online
 * backup copies every page of one snapshot (the WAL included), while the relay goes on writing.
 * Restoring is starting a relay on the copy (RELAY_DATABASE names it, or the copy is moved to
 * where RELAY_DATABASE points while no relay runs); it then delivers what was pending in the copy.
 * A PostgreSQL store is backed up with pg_dump instead (docs/operator/relay.md, "Backup and
 * restore"): the database's own tools see every table the relay's migrations made.
 */
export async function backupStore(database: string, to: string): Promise<{ pages: number }> {
	if (isPostgresUrl(database))
		throw new BackupError(
			'RELAY_DATABASE is PostgreSQL: back it up with pg_dump (pg_dump --format=custom --file=relay.dump "$RELAY_DATABASE"), restore with pg_restore into an empty database',
		);
	if (database === ':memory:')
		throw new BackupError('RELAY_DATABASE is :memory:, nothing to back up');
	if (!existsSync(database)) throw new BackupError(`RELAY_DATABASE ${database} does not exist`);
	if (existsSync(to)) throw new BackupError(`${to} already exists; name a new file`);
	const source = new DatabaseSync(database, { readOnly: true });
	try {
		return { pages: await backup(source, to) };
	} finally {
		source.close();
	}
}
