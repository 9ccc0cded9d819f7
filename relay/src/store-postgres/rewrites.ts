import type { PoolClient } from 'pg';
import { moneyBackRewrite } from '../store/money-back-keys.ts';

/**
 * Schema version 9's rewrite (store/money-back-keys.ts): the chargeback events' keys and the
 * catch-up's refund and chargeback marks under the one money-back identity, inside the
 * migration's transaction (schema.ts migrate: one instance at a time, under its lock).
 */
export async function rewriteMoneyBackKeys(client: PoolClient): Promise<void> {
	const events = await client.query<{
		id: string;
		dedupe_key: string | null;
		fields_json: Record<string, string>;
	}>("SELECT id, dedupe_key, fields_json FROM events WHERE kind = 'chargeback'");
	const marks = await client.query<{ mark: string; at: number | string }>(
		`SELECT mark, at FROM catchup_marks
			WHERE left(mark, 7) = 'refund:' OR left(mark, 11) = 'chargeback:'`,
	);
	const rewrite = moneyBackRewrite(
		events.rows.map((r) => ({ id: r.id, dedupeKey: r.dedupe_key, fields: r.fields_json })),
		marks.rows.map((r) => ({ mark: r.mark, at: Number(r.at) })),
	);
	if (rewrite.events.length > 0)
		await client.query(
			`UPDATE events e SET dedupe_key = u.k
				FROM unnest($1::text[], $2::text[]) AS u (id, k) WHERE e.id = u.id`,
			[rewrite.events.map((e) => e.id), rewrite.events.map((e) => e.key)],
		);
	if (rewrite.marks.length === 0) return;
	await client.query('DELETE FROM catchup_marks WHERE mark = ANY($1::text[])', [
		rewrite.marks.map((m) => m.old),
	]);
	const added = rewrite.marks.flatMap((m) => m.marks.map((mark) => ({ mark, at: m.at })));
	await client.query(
		`INSERT INTO catchup_marks (mark, at) SELECT * FROM unnest($1::text[], $2::bigint[])
			ON CONFLICT (mark) DO NOTHING`,
		[added.map((m) => m.mark), added.map((m) => m.at)],
	);
}
