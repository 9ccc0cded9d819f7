/**
 * Fifth security round: `paypalych-relay backup` and `restore` (relay/src/backup.ts). A backup
 * holds every payer's e-mail and phone: it is a new file of mode 0600 whatever the umask, never
 * written through a symbolic link, never over an existing file (whose mode stays as it was).
 * Restoring while a relay has the store open is refused; a truncated backup, random bytes,
 * another SQLite database, and a store of a newer relay are refused with a clear error; every
 * refusal leaves the store as it was. On both stores: a PostgreSQL store is refused by both
 * commands (pg_dump, pg_restore) and left as it was.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
	existsSync,
	lstatSync,
	readFileSync,
	readdirSync,
	statSync,
	symlinkSync,
	writeFileSync,
	chmodSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { expect, it } from 'vitest';
import { NODE, RELAY_BIN, ROOT, TOKEN, childEnv, paymentFields, tempDir } from '../helpers.ts';
import { onEveryStoreKind } from './world.ts';

/** The relay's command line, as an operator runs it, under a umask that takes nothing away. */
function cli(database: string, ...args: string[]) {
	return spawnSync('/bin/sh', ['-c', 'umask 000 && exec "$0" "$@"', NODE, RELAY_BIN, ...args], {
		cwd: ROOT,
		env: childEnv({ RELAY_DATABASE: database }),
		encoding: 'utf8',
	});
}

const digest = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
const mode = (path: string) => statSync(path).mode & 0o777;

onEveryStoreKind('fifth round: backup and restore', (w) => {
	const { relay, post, events, cleanups } = w;

	async function storeWithEvents() {
		const r = await relay();
		for (const trsId of ['T-b5-1', 'T-b5-2'])
			expect(
				(await post(r, '/postback/payment', paymentFields(trsId, { token: TOKEN }))).statusCode,
			).toBe(200);
		expect(await events(r)).toBe(2);
		return r;
	}
	function folder() {
		const tmp = tempDir();
		cleanups.push(async () => tmp.cleanup());
		return tmp.dir;
	}

	it('F5-11 a backup is a new file of mode 0600 whatever the umask; never through a symbolic link, never over a file, whose mode stays', async () => {
		const r = await storeWithEvents();
		const dir = folder();
		const copy = join(dir, 'backup.sqlite');
		const taken = cli(r.database, 'backup', copy);
		if (w.storeKind === 'postgresql') {
			expect(taken.status).toBe(2);
			expect(taken.stderr).toMatch(/pg_dump/);
			expect(existsSync(copy)).toBe(false);
			expect(await events(r)).toBe(2);
			return;
		}
		expect(taken.stderr).toBe('');
		expect(taken.status).toBe(0);
		expect(mode(copy)).toBe(0o600);
		// A symbolic link, dangling or to a file: refused, nothing written where it points.
		const elsewhere = join(dir, 'elsewhere.txt');
		const dangling = join(dir, 'dangling.sqlite');
		symlinkSync(join(dir, 'not-there.sqlite'), dangling);
		writeFileSync(elsewhere, "the operator's file");
		chmodSync(elsewhere, 0o644);
		const linked = join(dir, 'linked.sqlite');
		symlinkSync(elsewhere, linked);
		for (const target of [dangling, linked, elsewhere]) {
			const refused = cli(r.database, 'backup', target);
			expect(refused.status, refused.stderr).toBe(2);
			expect(refused.stderr).toMatch(/already exists; name a new file/);
		}
		expect(existsSync(join(dir, 'not-there.sqlite'))).toBe(false);
		expect(readFileSync(elsewhere, 'utf8')).toBe("the operator's file");
		expect(mode(elsewhere)).toBe(0o644);
		expect(lstatSync(dangling).isSymbolicLink()).toBe(true);
	}, 120_000);

	it('F5-12 restoring over a running relay is refused and the store is left as it was', async () => {
		const r = await storeWithEvents();
		const dir = folder();
		if (w.storeKind === 'postgresql') {
			const foreign = join(dir, 'any.sqlite');
			writeFileSync(foreign, 'x');
			const refused = cli(r.database, 'restore', foreign);
			expect(refused.status).toBe(2);
			expect(refused.stderr).toMatch(/PostgreSQL: restore a pg_dump with pg_restore/);
			expect(await events(r)).toBe(2);
			return;
		}
		const copy = join(dir, 'backup.sqlite');
		expect(cli(r.database, 'backup', copy).status).toBe(0);
		const before = readdirSync(dirname(r.database)).sort();
		const refused = cli(r.database, 'restore', copy);
		expect(refused.status, refused.stdout).toBe(2);
		expect(refused.stderr).toMatch(
			/is in use .*a relay has it open. Stop every relay on RELAY_DATABASE, then restore; nothing was changed/,
		);
		expect(readdirSync(dirname(r.database)).sort()).toEqual(before);
		// The running relay goes on with its store.
		expect(
			(await post(r, '/postback/payment', paymentFields('T-b5-3', { token: TOKEN }))).statusCode,
		).toBe(200);
		expect(await events(r)).toBe(3);
	}, 120_000);

	it("F5-13 a truncated backup, random bytes, another SQLite database, an empty file and a newer relay's store are refused, the store left as it was", async () => {
		const r = await storeWithEvents();
		const dir = folder();
		if (w.storeKind === 'postgresql') {
			writeFileSync(join(dir, 'random.bin'), Buffer.alloc(8192, 7));
			const refused = cli(r.database, 'restore', join(dir, 'random.bin'));
			expect(refused.status).toBe(2);
			expect(refused.stderr).toMatch(/pg_restore/);
			expect(await events(r)).toBe(2);
			return;
		}
		const copy = join(dir, 'backup.sqlite');
		expect(cli(r.database, 'backup', copy).status).toBe(0);
		await r.close();
		const store = r.database;
		const whole = readFileSync(copy);
		const truncated = join(dir, 'truncated.sqlite');
		writeFileSync(truncated, whole.subarray(0, Math.floor(whole.length / 2)));
		const random = join(dir, 'random.bin');
		writeFileSync(
			random,
			Buffer.from(Array.from({ length: 65536 }, (_, i) => (i * 7919 + 13) % 251)),
		);
		const other = join(dir, 'other.sqlite');
		const db = new DatabaseSync(other);
		db.exec("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('hello')");
		db.close();
		const empty = join(dir, 'empty.sqlite');
		writeFileSync(empty, '');
		const newer = join(dir, 'newer.sqlite');
		writeFileSync(newer, whole);
		const bump = new DatabaseSync(newer);
		bump.exec('PRAGMA user_version = 9999');
		bump.close();
		const before = { digest: digest(store), files: readdirSync(dirname(store)).sort() };
		const cases: Array<[string, RegExp]> = [
			[truncated, /is damaged or truncated|is damaged, truncated or not a SQLite file/],
			[random, /cannot be opened as a SQLite file|not a SQLite file|not a database/],
			[other, /is a SQLite file but not a relay store/],
			[empty, /not a relay store/],
			[newer, /schema version 9999, newer than this relay knows/],
			[join(dir, 'missing.sqlite'), /is not a file/],
		];
		for (const [file, says] of cases) {
			const refused = cli(store, 'restore', file);
			expect(refused.status, `${file}: ${refused.stdout}`).toBe(2);
			expect(refused.stderr, file).toMatch(says);
			expect(digest(store)).toBe(before.digest);
			expect(readdirSync(dirname(store)).sort()).toEqual(before.files);
		}
		// Nothing was written beside the files read either.
		expect(readdirSync(dir).filter((f) => /-(wal|shm|journal)$/.test(f))).toEqual([]);

		// The backup itself is restored: the store set aside, the copy in place (0600), a relay on it
		// has both events.
		const restored = cli(store, 'restore', copy);
		expect(restored.stderr).toBe('');
		expect(restored.status).toBe(0);
		const kept = /kept as (\S+)\./.exec(restored.stdout)?.[1] ?? '';
		expect(existsSync(kept)).toBe(true);
		expect(mode(store)).toBe(0o600);
		const again = await relay({}, { database: store });
		expect(await events(again)).toBe(2);
	}, 120_000);
});
