// `paypalych-relay backup FILE`: a copy of the SQLite store taken while the relay runs, restored
// into a new relay, delivers what was pending at the backup, once, and nothing that came after it.
import { spawnSync } from 'node:child_process';
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
	NODE,
	RELAY_BIN,
	ROOT,
	Target,
	baseEnv,
	form,
	freePort,
	paymentFields,
	childEnv,
	spawnRelay,
	stopRelays,
	tempDir,
} from './helpers.ts';
import type { RelayProcess } from './helpers.ts';
import { waitFor } from '../../scripts/harness/wait.ts';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

function runBackup(env: Record<string, string>, ...args: string[]) {
	return spawnSync(NODE, [RELAY_BIN, 'backup', ...args], {
		cwd: ROOT,
		env: childEnv(env),
		encoding: 'utf8',
	});
}

describe('backup and restore of the SQLite store', () => {
	const tmp = tempDir();
	const target = new Target();
	const children: RelayProcess[] = [];

	afterAll(async () => {
		await stopRelays(children);
		await target.close();
		tmp.cleanup();
	});

	it('a backup taken while running, restored into a new relay, delivers what was pending once', async () => {
		// The target is down while the first relay runs: every postback stays pending.
		const port = await freePort();
		const env = baseEnv(tmp.dir, { payment: [`http://127.0.0.1:${port}/pay`] });
		const first = await spawnRelay(env);
		children.push(first);
		const send = (trsId: string) =>
			fetch(`${first.url}/postback/payment`, {
				method: 'POST',
				headers: FORM,
				body: form(paymentFields(trsId)),
			});
		// Sent again once when the connection kept alive was closed under it (the backup command can
		// take longer than the relay's keep-alive timeout on a busy machine): the service would too.
		const post = async (trsId: string) => (await send(trsId).catch(() => send(trsId))).status;
		const pending = ['T-bk-1', 'T-bk-2', 'T-bk-3'];
		for (const trsId of pending) expect(await post(trsId)).toBe(200);

		const copy = join(tmp.dir, 'backup.sqlite');
		const taken = runBackup({ RELAY_DATABASE: env.RELAY_DATABASE }, copy);
		expect(taken.stderr).toBe('');
		expect(taken.status).toBe(0);
		expect(taken.stdout).toMatch(/backed up .* to .*backup\.sqlite/);
		// After the backup: in the old store only.
		expect(await post('T-bk-after')).toBe(200);
		first.proc.kill('SIGKILL');
		await first.exited;

		// Restore: a new relay on a copy of the backup, the target up.
		const restored = join(tmp.dir, 'restored.sqlite');
		copyFileSync(copy, restored);
		target.responder = () => ({ status: 200 });
		await target.listen(port);
		const second = await spawnRelay({ ...env, RELAY_DATABASE: restored });
		children.push(second);
		const trsIds = () => target.received.map((r) => new URLSearchParams(r.body).get('TrsId'));
		await waitFor('the pending deliveries', () => trsIds().length >= pending.length);
		// Long enough for a second delivery of any of them to show (the retry delays are 20-200 ms).
		await new Promise((r) => setTimeout(r, 1500));
		expect(trsIds().sort()).toEqual(pending);
	}, 60_000);

	it('refuses an existing file, a missing store and a PostgreSQL store, saying what to do', () => {
		const existing = join(tmp.dir, 'exists.sqlite');
		writeFileSync(existing, '');
		const database = join(tmp.dir, 'relay.sqlite');
		const cases = [
			[{ RELAY_DATABASE: database }, [existing], /already exists; name a new file/],
			[
				{ RELAY_DATABASE: join(tmp.dir, 'none.sqlite') },
				[join(tmp.dir, 'n.sqlite')],
				/does not exist/,
			],
			[{ RELAY_DATABASE: 'postgres://postgres@127.0.0.1:5432/x' }, [join(tmp.dir, 'p')], /pg_dump/],
			[{}, [join(tmp.dir, 'q')], /set RELAY_DATABASE/],
			[{ RELAY_DATABASE: database }, [], /name one new FILE/],
		] as const;
		for (const [env, args, says] of cases) {
			const run = runBackup(env, ...args);
			expect(run.status, run.stderr).toBe(2);
			expect(run.stderr).toMatch(says);
		}
	});
});
