import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** How long a console login lasts. */
export const SESSION_TTL_MS = 8 * 3_600_000;
/** How long the login form may sit open before it must be reloaded. */
export const LOGIN_FORM_TTL_MS = 3_600_000;

export interface ConsoleSession {
	/** Random, names this login (CSRF tokens are bound to it; logout revokes it). */
	id: string;
	expiresAt: number;
}

const b64 = (buf: Buffer) => buf.toString('base64url');

function sameText(a: string, b: string): boolean {
	const x = Buffer.from(a);
	const y = Buffer.from(b);
	return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Console logins without server-side state: the cookie holds `v1.<expiresAt>.<id>.<mac>`, signed
 * with a key derived from the admin token (HMAC-SHA256), never the token itself. Changing
 * RELAY_ADMIN_TOKEN ends every session; several relays with the same token accept each other's
 * cookies. CSRF tokens are MACs of the session id (synchroniser tokens that need no storage);
 * the login form has its own, bound to a short-lived random cookie.
 */
/** Where logouts are kept so that every instance and every restart sees them (the store). */
export interface SessionRevocations {
	revokeSession(id: string, expiresAt: number, now: number): Promise<void>;
	sessionRevoked(id: string): Promise<boolean>;
}

export class ConsoleAuth {
	readonly #key: Buffer;
	readonly #token: Buffer;
	readonly #now: () => number;
	/** Logged-out session ids until they expire (per process). */
	readonly #revoked = new Map<string, number>();

	readonly #store: SessionRevocations | undefined;

	constructor(adminToken: string, now: () => number = Date.now, revocations?: SessionRevocations) {
		this.#store = revocations;
		this.#key = createHmac('sha256', adminToken)
			.update('paypalych-relay console session v1')
			.digest();
		this.#token = createHash('sha256').update(adminToken).digest();
		this.#now = now;
	}

	#mac(purpose: string, text: string): string {
		return b64(createHmac('sha256', this.#key).update(`${purpose}\n${text}`).digest());
	}

	/** Constant-time comparison of what was typed with the admin token. */
	checkToken(typed: string): boolean {
		return timingSafeEqual(createHash('sha256').update(typed.trim()).digest(), this.#token);
	}

	issue(): { cookie: string; session: ConsoleSession } {
		const session = { id: b64(randomBytes(18)), expiresAt: this.#now() + SESSION_TTL_MS };
		const body = `v1.${session.expiresAt}.${session.id}`;
		return { cookie: `${body}.${this.#mac('session', body)}`, session };
	}

	verify(cookie: string | undefined): ConsoleSession | undefined {
		if (!cookie) return undefined;
		const m = /^(v1\.(\d{1,15})\.([A-Za-z0-9_-]{24}))\.([A-Za-z0-9_-]{43})$/.exec(cookie);
		if (!m || !sameText(m[4], this.#mac('session', m[1]))) return undefined;
		const session = { id: m[3], expiresAt: Number(m[2]) };
		if (session.expiresAt <= this.#now() || this.#revoked.has(session.id)) return undefined;
		return session;
	}

	revoke(session: ConsoleSession): void {
		const now = this.#now();
		for (const [id, expiresAt] of this.#revoked) if (expiresAt <= now) this.#revoked.delete(id);
		this.#revoked.set(session.id, session.expiresAt);
	}

	/**
	 * `verify`, and the session was not logged out on any instance sharing the store, before or
	 * after a restart. A store that cannot answer counts as signed out.
	 */
	async check(cookie: string | undefined): Promise<ConsoleSession | undefined> {
		const session = this.verify(cookie);
		if (!session || !this.#store) return session;
		const revoked = await this.#store.sessionRevoked(session.id).catch(() => true);
		return revoked ? undefined : session;
	}

	/** Logs a session out here and in the store (every instance, every restart). */
	async revokeEverywhere(session: ConsoleSession): Promise<void> {
		this.revoke(session);
		await this.#store?.revokeSession(session.id, session.expiresAt, this.#now());
	}

	csrfToken(session: ConsoleSession): string {
		return this.#mac('csrf', session.id);
	}

	checkCsrf(session: ConsoleSession, token: unknown): boolean {
		return typeof token === 'string' && sameText(token, this.csrfToken(session));
	}

	/** A fresh login-form nonce (`<expiresAt>.<random>`, set as a cookie) and the form's token for it. */
	loginForm(): { nonce: string; token: string } {
		const nonce = `${this.#now() + LOGIN_FORM_TTL_MS}.${b64(randomBytes(18))}`;
		return { nonce, token: this.#mac('login', nonce) };
	}

	checkLoginForm(nonce: string | undefined, token: unknown): boolean {
		if (!nonce || typeof token !== 'string') return false;
		const m = /^(\d{1,15})\.[A-Za-z0-9_-]{24}$/.exec(nonce);
		return !!m && Number(m[1]) > this.#now() && sameText(token, this.#mac('login', nonce));
	}
}
