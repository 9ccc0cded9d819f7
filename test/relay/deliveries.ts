/**
 * What the forwarder suites share: a relay's admin API and payment postback over HTTP, and the
 * relay's SQLite file read directly.
 */
import { DatabaseSync } from 'node:sqlite';
import { join } from 'node:path';
import type { RunningRelay } from '../../relay/src/server.ts';
import { ADMIN_TOKEN, form } from './helpers.ts';

export type Row = Record<string, unknown>;

export const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
export const admin = (relay: RunningRelay, path: string, init: RequestInit = {}) =>
	fetch(`${relay.url}/admin${path}`, {
		...init,
		headers: {
			authorization: `Bearer ${ADMIN_TOKEN}`,
			...(init.body ? { 'content-type': 'application/json' } : {}),
			...init.headers,
		},
	});
export const postPayment = async (relay: RunningRelay, fields: Record<string, string>) => {
	const res = await fetch(`${relay.url}/postback/payment`, {
		method: 'POST',
		headers: FORM,
		body: form(fields),
	});
	return res.status;
};

/** The relay's SQLite file, read-only: its deliveries of one TrsId. */
export function openDb(dir: string) {
	const db = new DatabaseSync(join(dir, 'relay.sqlite'), { readOnly: true });
	return {
		db,
		deliveriesFor: (trsId: string) =>
			db
				.prepare(
					`SELECT d.* FROM deliveries d JOIN events e ON e.id = d.event_id
					 WHERE json_extract(e.fields_json, '$.TrsId') = ? ORDER BY d.id`,
				)
				.all(trsId) as Row[],
	};
}
