import type { IWebhookFunctions } from 'n8n-workflow';

import { CREDENTIAL_NAME, type ApiCredential } from '../PayPalych/transport';

/**
 * The credential of a webhook call. Every read of a credential goes to n8n's database and, under
 * n8n 2.x's default expression engine, through an isolate built for that read alone (about 40 ms
 * of CPU on a small machine, more than the rest of a postback): so a call reads it at most once,
 * and a call whose claim the service confirms may use the read of an earlier call of the same node
 * for a short while.
 *
 * Kept reads never loosen a check, and a credential change is seen at once:
 * - only where the service confirms what the call claims (a confirmed payment or payout, a
 *   refund, a chargeback) or where nothing is claimed (a redirect): a postback taken on its
 *   signature alone (confirmation off) always reads the credential afresh;
 * - a signature that does not verify with a kept token is checked again with a fresh read (the
 *   merchant may have changed the token), so a new token is seen at once;
 * - a call that used a kept read starts a fresh read beside its confirmation, and no postback is
 *   accepted before that read shows the same token, base URL and shop (credentialChanged): a
 *   postback of the previous credential (another shop's token the service still accepts) is
 *   checked again from its signature with the credential as it is now, and refused;
 * - any confirmation that fails forgets the kept read, so the service's refusal of an old token
 *   (or an old base URL) is never met twice;
 * - a kept read is used for at most CREDENTIAL_KEEP_MS, and never across an n8n restart.
 * What a kept read spares, then, is the read of the calls that start nothing: duplicates, calls
 * the service refuses, forgeries that fail with the kept token and its fresh re-check alike.
 */
export const CREDENTIAL_KEEP_MS = 60_000;

/** At most this many trigger nodes' reads are kept (the oldest go first). */
const KEPT_LIMIT = 256;

interface Read {
	credential: Promise<ApiCredential>;
	/** Whether the read came from an earlier call. */
	kept: boolean;
	/** For a kept read: the fresh read made beside the call's confirmation (readAfreshBeside). */
	fresh?: Promise<ApiCredential>;
}

/** This call's read, per context: n8n builds a context for each webhook call. */
const reads = new WeakMap<IWebhookFunctions, Read>();

/** Reads kept for later calls, per workflow, node and credential, with the time they were made. */
const kept = new Map<string, { credential: Promise<ApiCredential>; at: number }>();

function scopeOf(context: IWebhookFunctions): string {
	const node = context.getNode();
	const credential = node.credentials?.[CREDENTIAL_NAME];
	return JSON.stringify([
		context.getWorkflow().id ?? '',
		node.name,
		credential?.id ?? credential?.name ?? '',
	]);
}

/** Keeps a read for later calls of the node (a read that fails is never kept). */
function keep(scope: string, credential: Promise<ApiCredential>): Promise<ApiCredential> {
	kept.delete(scope);
	kept.set(scope, { credential, at: Date.now() });
	if (kept.size > KEPT_LIMIT) kept.delete(kept.keys().next().value as string);
	credential.catch(() => {
		if (kept.get(scope)?.credential === credential) kept.delete(scope);
	});
	return credential;
}

function readNow(context: IWebhookFunctions, scope: string): Promise<ApiCredential> {
	return keep(scope, context.getCredentials(CREDENTIAL_NAME));
}

/**
 * The credential for this call: read once per call, or (`mayKeep`: the service confirms the call's
 * claim, or it claims nothing) an earlier call's read younger than CREDENTIAL_KEEP_MS.
 */
export async function credentialOf(
	context: IWebhookFunctions,
	mayKeep = false,
): Promise<ApiCredential> {
	let read = reads.get(context);
	if (read === undefined) {
		const scope = scopeOf(context);
		const earlier = mayKeep ? kept.get(scope) : undefined;
		read =
			earlier !== undefined && Date.now() - earlier.at < CREDENTIAL_KEEP_MS
				? { credential: earlier.credential, kept: true }
				: { credential: readNow(context, scope), kept: false };
		reads.set(context, read);
	}
	return await read.credential;
}

/** The API token and, when it has blanks around it, the token trimmed: what a signature may use. */
export function tokensOf(credential: ApiCredential): string[] {
	const token = typeof credential.apiToken === 'string' ? credential.apiToken : '';
	return token.trim() === token ? [token] : [token, token.trim()];
}

/**
 * Whether a call's checks may use an earlier call's read: where the service confirms what the
 * call claims (Confirm With PayPalych API on, for every postback kind), or for a redirect, which
 * claims nothing. A postback taken on its signature alone is checked with a fresh read.
 */
function mayKeep(context: IWebhookFunctions, event: string): boolean {
	return (
		event === 'success' ||
		event === 'fail' ||
		(context.getNodeParameter('confirmWithApi', true) as boolean)
	);
}

/**
 * A signature check with the credential's tokens, for a call of the node's `event`. When it fails
 * with a kept read, the credential is read afresh and the check made again: only a fresh read ever
 * refuses a signature.
 */
export async function checkSigned<T extends { ok: boolean }>(
	context: IWebhookFunctions,
	event: string,
	check: (tokens: string[]) => T,
): Promise<T> {
	const verdict = check(tokensOf(await credentialOf(context, mayKeep(context, event))));
	const read = reads.get(context);
	if (verdict.ok || read?.kept !== true) return verdict;
	// Checked again with a fresh read: the one made beside the call already, or a new one.
	const fresh = read.fresh;
	forgetCredential(context);
	if (fresh !== undefined)
		reads.set(context, { credential: keep(scopeOf(context), fresh), kept: false });
	return check(tokensOf(await credentialOf(context)));
}

/** What must be the same for a kept read to stand for the credential: token, base URL and shop. */
const fingerprint = (credential: ApiCredential) =>
	JSON.stringify([
		credential.apiToken ?? '',
		credential.baseUrl ?? '',
		(credential as { shopId?: unknown }).shopId ?? '',
	]);

/**
 * For a call that uses a kept read and may start the workflow: a fresh read of the credential,
 * started now so that it runs beside the call's confirmation (credentialChanged awaits it). A call
 * that starts nothing (a duplicate) makes none.
 */
export function readAfreshBeside(context: IWebhookFunctions): void {
	const read = reads.get(context);
	if (read === undefined || !read.kept || read.fresh !== undefined) return;
	const fresh: Promise<ApiCredential> = context.getCredentials(CREDENTIAL_NAME);
	// A failed read is met when credentialChanged awaits it.
	fresh.catch(() => undefined);
	read.fresh = fresh;
}

/**
 * Whether the credential changed since the kept read this call used (false for a call that read
 * afresh). The fresh read made beside the call is awaited and compared: another token, base URL
 * or shop drops the kept read, and this call's read becomes the fresh one, so the caller checks
 * the call again from its signature; the same keeps it (as of now). A fresh read that fails drops
 * the kept read too and is answered as changed: the caller checks again with a new read.
 */
export async function credentialChanged(context: IWebhookFunctions): Promise<boolean> {
	readAfreshBeside(context);
	const read = reads.get(context);
	if (read === undefined || !read.kept || read.fresh === undefined) return false;
	const scope = scopeOf(context);
	let fresh: ApiCredential;
	try {
		fresh = await read.fresh;
	} catch {
		forgetCredential(context);
		return true;
	}
	const same = fingerprint(fresh) === fingerprint(await read.credential);
	const credential = Promise.resolve(fresh);
	reads.set(context, { credential, kept: false });
	const earlier = kept.get(scope);
	if (earlier?.credential === read.credential) {
		// The same: kept as from its first read (CREDENTIAL_KEEP_MS still counts from then).
		kept.set(scope, { credential, at: same ? earlier.at : Date.now() });
	}
	return !same;
}

/** Forgets the kept read of this call's node (and this call's own): the next read is fresh. */
export function forgetCredential(context: IWebhookFunctions): void {
	const read = reads.get(context);
	reads.delete(context);
	const scope = scopeOf(context);
	if (read === undefined || kept.get(scope)?.credential === read.credential) kept.delete(scope);
}

/** Forgets every kept read: what a restarted n8n starts with (used by the tests). */
export function forgetAllCredentials(): void {
	kept.clear();
}
