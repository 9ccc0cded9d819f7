import { randomBytes } from 'node:crypto';
import { closeSync, constants, existsSync, fchmodSync, lstatSync, openSync } from 'node:fs';
import { renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DatabaseSync, backup } from 'node:sqlite';
import { isPostgresUrl } from './config-fields.ts';
import { SQLITE_MIGRATIONS } from './store-sqlite/schema.ts';

/** Why a backup or a restore was not done: a message for the operator, and the exit code. */
export class BackupError extends Error {}

/** The tables every relay store has since its first schema version. */
const RELAY_TABLES = ['events', 'deliveries', 'attempts'];

/**
 * A new file only the relay's user may read or write (mode 0600: a store holds every payer's
 * e-mail and phone): never an existing file, never through a symbolic link (O_EXCL refuses both).
 */
function createPrivateFile(path: string): void {
	let fd: number;
	try {
		fd = openSync(
			path,
			constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | (constants.O_NOFOLLOW ?? 0),
			0o600,
		);
	} catch (error) {
		const code = (error as NodeJS.ErrnoException).code;
		if (code === 'EEXIST' || code === 'ELOOP')
			throw new BackupError(`${path} already exists; name a new file`);
		throw new BackupError(`cannot create ${path}: ${(error as Error).message}`);
	}
	try {
		// The umask only takes bits away; this makes sure none is added either.
		fchmodSync(fd, 0o600);
	} finally {
		closeSync(fd);
	}
}

/** Whether anything (a file, a folder, a symbolic link, even a dangling one) is at `path`. */
function occupied(path: string): boolean {
	try {
		lstatSync(path);
		return true;
	} catch {
		return false;
	}
}

/** Removes a file SQLite wrote, with its journal files. */
function removeWithJournals(path: string): void {
	for (const suffix of ['', '-journal', '-wal', '-shm'])
		rmSync(`${path}${suffix}`, { force: true });
}

/** SQLite's online backup of `source` into the new private file `to`; removed when it fails. */
async function copyInto(source: DatabaseSync, to: string): Promise<number> {
	createPrivateFile(to);
	try {
		return await backup(source, to);
	} catch (error) {
		removeWithJournals(to);
		throw error;
	}
}

/**
 * A consistent copy of the relay's SQLite store, taken while the relay runs: SQLite's online
 * backup copies every page of one snapshot (the WAL included), while the relay goes on writing.
 * The copy is a new file of mode 0600 (not an existing file, not through a symbolic link).
 * Restoring is `restoreStore` (`paypalych-relay restore FILE`) while no relay has the store open.
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
	if (occupied(to)) throw new BackupError(`${to} already exists; name a new file`);
	const source = new DatabaseSync(database, { readOnly: true });
	try {
		return { pages: await copyInto(source, to) };
	} finally {
		source.close();
	}
}

/**
 * Why `file` is not a whole relay backup, or undefined when it is: a SQLite file (not random
 * bytes), whole (SQLite's quick_check: a truncated copy fails it), at a schema version this relay
 * knows, with the relay's tables. Read as immutable: nothing is written beside it.
 */
export function backupProblem(file: string): string | undefined {
	let db: DatabaseSync;
	try {
		db = new DatabaseSync(`${pathToFileURL(file).href}?immutable=1`, { readOnly: true });
	} catch (error) {
		return `cannot be opened as a SQLite file (${(error as Error).message})`;
	}
	try {
		const check = db.prepare('PRAGMA quick_check').all() as Array<{ quick_check: string }>;
		if (check.length !== 1 || check[0].quick_check !== 'ok')
			return `is damaged or truncated (SQLite quick_check: ${check
				.slice(0, 3)
				.map((row) => row.quick_check)
				.join('; ')})`;
		const version = Number(
			(db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version,
		);
		const tables = new Set(
			(
				db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{
					name: string;
				}>
			).map((row) => row.name),
		);
		if (version < 1 || !RELAY_TABLES.every((name) => tables.has(name)))
			return 'is a SQLite file but not a relay store (no relay tables)';
		if (version > SQLITE_MIGRATIONS.length)
			return `is at schema version ${version}, newer than this relay knows (${SQLITE_MIGRATIONS.length}); restore it with that relay's version or a newer one`;
		return undefined;
	} catch (error) {
		return `is damaged, truncated or not a SQLite file (${(error as Error).message})`;
	} finally {
		db.close();
	}
}

/**
 * Holds the store exclusively (SQLite's exclusive locking mode: no other connection may read or
 * write it while this one is open), or says that something has it open: a running relay.
 */
function lockStore(database: string): DatabaseSync {
	const db = new DatabaseSync(database);
	try {
		db.exec('PRAGMA busy_timeout = 0');
		db.exec('PRAGMA locking_mode = EXCLUSIVE');
		db.exec('BEGIN EXCLUSIVE');
		db.exec('COMMIT');
		return db;
	} catch (error) {
		db.close();
		throw new BackupError(
			`${database} is in use (${(error as Error).message}): a relay has it open. Stop every relay on RELAY_DATABASE, then restore; nothing was changed`,
		);
	}
}

/**
 * Restores a backup (`backupStore`) into RELAY_DATABASE while no relay runs on it. Refused, with
 * the store left untouched: a PostgreSQL store (pg_restore), a file that is not a whole relay
 * backup (backupProblem), and a store some relay has open (lockStore). Otherwise the backup is
 * copied into a new private file beside the store and checked again, the store in place (with its
 * WAL) is kept as `<store>.before-restore-<time>`, and the copy takes its name: a relay started
 * on RELAY_DATABASE then delivers what was pending at the backup.
 */
export async function restoreStore(
	database: string,
	from: string,
	now = new Date(),
): Promise<{ pages: number; kept?: string }> {
	if (isPostgresUrl(database))
		throw new BackupError(
			'RELAY_DATABASE is PostgreSQL: restore a pg_dump with pg_restore into an empty database, then point RELAY_DATABASE at it',
		);
	if (database === ':memory:')
		throw new BackupError('RELAY_DATABASE is :memory:, nothing to restore');
	if (!existsSync(from) || !lstatSync(from).isFile())
		throw new BackupError(`${from} is not a file`);
	const problem = backupProblem(from);
	if (problem) throw new BackupError(`${from} ${problem}; nothing was changed`);
	const copy = join(
		dirname(database),
		`.${basename(database)}.restoring-${randomBytes(6).toString('hex')}`,
	);
	if (!existsSync(database) && ['-wal', '-shm'].some((suffix) => occupied(`${database}${suffix}`)))
		throw new BackupError(
			`${database}-wal or -shm is there without ${database}: move them away (they belong to another store), then restore; nothing was changed`,
		);
	const lock = existsSync(database) ? lockStore(database) : undefined;
	let pages: number;
	try {
		const source = new DatabaseSync(`${pathToFileURL(from).href}?immutable=1`, { readOnly: true });
		try {
			pages = await copyInto(source, copy);
		} finally {
			source.close();
		}
		const again = backupProblem(copy);
		if (again) throw new BackupError(`the copy of ${from} ${again}; nothing was changed`);
	} catch (error) {
		removeWithJournals(copy);
		lock?.close();
		throw error;
	}
	// Closing the lock folds the store's WAL into it: the store set aside is whole on its own.
	lock?.close();
	let kept: string | undefined;
	if (lock) {
		kept = `${database}.before-restore-${now.toISOString().replace(/[:.]/g, '-')}`;
		renameSync(database, kept);
		for (const suffix of ['-wal', '-shm'])
			if (occupied(`${database}${suffix}`)) renameSync(`${database}${suffix}`, `${kept}${suffix}`);
	}
	renameSync(copy, database);
	return { pages, ...(kept ? { kept } : {}) };
}
