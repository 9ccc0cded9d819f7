/**
 * The credential read kept between calls (nodes/PayPalychTrigger/credential.ts): n8n 2.x builds
 * an isolate for every credential read from a webhook, so a node whose postbacks the service
 * confirms reads it once per postback it accepts and never for a call that starts nothing (a
 * duplicate); and no check is the weaker for it: a postback taken on its signature alone reads
 * afresh, a new token is seen at once, a token the service refuses is never used twice, an old
 * token's signature is never the last word, and a postback of the previous credential never
 * starts the workflow after the merchant changed it.
 */
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CREDENTIAL_KEEP_MS } from '../../dist/nodes/PayPalychTrigger/credential.js';
import { control, PROFILES, type Sandbox, type TestMerchant } from '../helpers/sandbox.ts';
import type { WebhookHarness } from '../helpers/webhook-harness.ts';
import { startTrigger, postForm } from '../helpers/trigger-harness.ts';
import { triggerSandbox } from '../helpers/trigger-sandbox.ts';

const md5 = (text: string) => createHash('md5').update(text).digest('hex').toUpperCase();

describe.each(PROFILES)('sandbox profile %s', (profile) => {
	let sb: Sandbox;
	let merchant: TestMerchant;
	const open: WebhookHarness[] = [];

	const { bill, pay } = triggerSandbox({
		profile,
		merchant: { liveExtras: profile === 'live' },
		open,
		started: (started, made) => {
			sb = started;
			merchant = made;
		},
	});

	afterEach(() => {
		vi.useRealTimers();
	});

	/** A trigger with its own copy of the credential (a test may change the token in it). */
	async function trigger(parameters: Record<string, unknown>) {
		const credential = { ...merchant.credential };
		const h = await startTrigger(parameters, credential);
		open.push(h);
		return { h, credential };
	}

	async function paidPostback(orderId: string): Promise<Record<string, string>> {
		return (await pay(await bill('40.00', `${orderId}-${profile}`))).postback as Record<
			string,
			string
		>;
	}

	/** The merchant's token changed at the service: the old one is refused from now on. */
	async function rotateToken(): Promise<{ old: string; token: string }> {
		const old = merchant.token;
		const { token } = await control<{ token: string }>(
			sb,
			'POST',
			`/merchants/${merchant.merchantId}/rotate-token`,
			{},
		);
		merchant.token = token;
		merchant.credential = { ...merchant.credential, apiToken: token };
		return { old, token };
	}

	it('a confirming node reads the credential once per postback it accepts and never for a duplicate; another node reads its own', async () => {
		const { h } = await trigger({ event: 'payment', orderCheck: 'billId' });
		const postbacks = [
			await paidPostback('keep-1'),
			await paidPostback('keep-2'),
			await paidPostback('keep-3'),
		];
		for (const postback of postbacks) {
			expect(await postForm(h.url, postback)).toMatchObject({ status: 200, receipt: 'accepted' });
		}
		expect(h.credentialCounts).toEqual({ reads: 3, authentications: 0 });
		expect(await postForm(h.url, postbacks[0])).toMatchObject({ receipt: 'duplicate' });
		expect(await postForm(h.url, postbacks[1])).toMatchObject({ receipt: 'duplicate' });
		expect(h.executions).toHaveLength(3);
		expect(h.credentialCounts).toEqual({ reads: 3, authentications: 0 });

		const other = await trigger({ event: 'payment', orderCheck: 'billId' });
		expect(await postForm(other.h.url, await paidPostback('keep-4'))).toMatchObject({
			receipt: 'accepted',
		});
		expect(other.h.credentialCounts.reads).toBe(1);
	});

	it('with confirmation off the signature is the only check: every call reads the credential, and a changed token is used at once', async () => {
		const { h, credential } = await trigger({ event: 'payment', confirmWithApi: false });
		const first = await paidPostback('off-1');
		expect(await postForm(h.url, first)).toMatchObject({ receipt: 'accepted' });
		expect(await postForm(h.url, first)).toMatchObject({ receipt: 'duplicate' });
		expect(h.credentialCounts.reads).toBe(2);
		// The merchant puts a new token into the credential: a call signed with the old one is
		// refused on the very next call.
		const signedWithOld = await paidPostback('off-2');
		credential.apiToken = 'a-new-token-the-service-has-not-used-0123456789';
		expect(await postForm(h.url, signedWithOld)).toMatchObject({
			status: 401,
			receipt: 'rejected',
		});
		expect(h.credentialCounts.reads).toBe(3);
		expect(h.executions).toHaveLength(1);
	});

	it('a rotated token: a postback signed with the new one verifies at once (the credential read afresh), a copy signed with the old one is refused', async () => {
		const { h, credential } = await trigger({ event: 'payment', orderCheck: 'billId' });
		expect(await postForm(h.url, await paidPostback('rot-1'))).toMatchObject({
			receipt: 'accepted',
		});
		expect(h.credentialCounts.reads).toBe(1);

		const { old, token } = await rotateToken();
		credential.apiToken = token;
		// The service now signs with the new token: the kept read's check fails, the credential is
		// read afresh and the postback verifies.
		const genuine = await paidPostback('rot-2');
		expect(await postForm(h.url, genuine)).toMatchObject({ status: 200, receipt: 'accepted' });
		expect(h.credentialCounts.reads).toBe(2);
		// The attacker holds the old token (the reason for the rotation) and signs a copy.
		const forged = { ...genuine, SignatureValue: signed(genuine, old) };
		expect(await postForm(h.url, forged)).toMatchObject({ status: 401, receipt: 'rejected' });
		expect(h.executions).toHaveLength(2);
	});

	it('an old-token forgery while the old token is still kept: the service refuses the token, nothing starts, the read is forgotten, and the next call refuses the forgery on its signature', async () => {
		const { h, credential } = await trigger({ event: 'payment', orderCheck: 'billId' });
		expect(await postForm(h.url, await paidPostback('kept-old-1'))).toMatchObject({
			receipt: 'accepted',
		});
		const { old, token } = await rotateToken();
		credential.apiToken = token;
		const genuine = await paidPostback('kept-old-2');
		const forged = { ...genuine, SignatureValue: signed(genuine, old) };
		// The kept (old) token verifies the copy, but the service refuses the old token (the fresh
		// read made beside the confirmation is the second read).
		expect(await postForm(h.url, forged)).toMatchObject({ status: 503, receipt: 'retry' });
		expect(h.executions).toHaveLength(1);
		expect(h.credentialCounts.reads).toBe(2);
		expect(await postForm(h.url, forged)).toMatchObject({ status: 401, receipt: 'rejected' });
		expect(h.credentialCounts.reads).toBe(3);
		expect(await postForm(h.url, genuine)).toMatchObject({ receipt: 'accepted' });
		expect(h.executions).toHaveLength(2);
		expect(h.executions[1][0][0].json).toMatchObject({ confirmed: true, paid: true });
	});

	/** A postback's signature as a sender holding `token` makes it. */
	function signed(postback: Record<string, string>, token: string): string {
		return md5(`${postback.OutSum}:${postback.InvId}:${token}`);
	}

	it('a confirmation that fails forgets the kept read; the next call reads afresh', async () => {
		const { h } = await trigger({ event: 'payment', orderCheck: 'billId' });
		expect(await postForm(h.url, await paidPostback('fail-1'))).toMatchObject({
			receipt: 'accepted',
		});
		const unknown = {
			InvId: 'fail-unknown',
			OutSum: '40.00',
			TrsId: 'NoSuchPayment01',
			Status: 'SUCCESS',
			CurrencyIn: 'RUB',
			SignatureValue: md5(`40.00:fail-unknown:${merchant.token}`),
		};
		expect(await postForm(h.url, unknown)).toMatchObject({ status: 503, receipt: 'retry' });
		expect(h.credentialCounts.reads).toBe(2);
		// Forgotten: the next call reads afresh and keeps that read (no second read to accept).
		expect(await postForm(h.url, await paidPostback('fail-2'))).toMatchObject({
			receipt: 'accepted',
		});
		expect(h.credentialCounts.reads).toBe(3);
	});

	it(`a kept read is used for at most CREDENTIAL_KEEP_MS (${CREDENTIAL_KEEP_MS} ms)`, async () => {
		const { h } = await trigger({ event: 'payment', orderCheck: 'billId' });
		expect(await postForm(h.url, await paidPostback('age-1'))).toMatchObject({
			receipt: 'accepted',
		});
		const age2 = await paidPostback('age-2');
		vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + CREDENTIAL_KEEP_MS - 1000 });
		expect(await postForm(h.url, age2)).toMatchObject({ receipt: 'accepted' });
		expect(h.credentialCounts.reads).toBe(2);
		// A duplicate within the keep reads nothing.
		expect(await postForm(h.url, age2)).toMatchObject({ receipt: 'duplicate' });
		expect(h.credentialCounts.reads).toBe(2);
		// Past it, the duplicate is checked with a fresh read (the keep counts from the first read).
		vi.setSystemTime(Date.now() + 2000);
		expect(await postForm(h.url, age2)).toMatchObject({ receipt: 'duplicate' });
		expect(h.credentialCounts.reads).toBe(3);
	});

	it("a credential moved to another shop's token: 5 s later a genuine postback of the old shop, verified by the kept read and confirmed with the old token, is checked again with the credential as it is now and refused", async () => {
		const { h, credential } = await trigger({ event: 'payment', orderCheck: 'billId' });
		expect(await postForm(h.url, await paidPostback('move-1'))).toMatchObject({
			receipt: 'accepted',
		});
		// The merchant points the credential at another shop's account (a token the service also
		// accepts, for another merchant); the old shop's account still posts to this URL.
		credential.apiToken = 'another-shops-token-0123456789abcdef';
		vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 5000 });
		const oldShops = await paidPostback('move-2');
		expect(await postForm(h.url, oldShops)).toMatchObject({ status: 401, receipt: 'rejected' });
		expect(h.executions).toHaveLength(1);
		// The kept read is gone: the next copy is refused on its signature at once.
		expect(await postForm(h.url, oldShops)).toMatchObject({ status: 401, receipt: 'rejected' });
		expect(h.executions).toHaveLength(1);
	});

	it('a credential whose base URL or shop changed is not the same credential: the postback is checked again from its signature', async () => {
		const { h, credential } = await trigger({ event: 'payment', orderCheck: 'billId' });
		expect(await postForm(h.url, await paidPostback('shop-1'))).toMatchObject({
			receipt: 'accepted',
		});
		const reads = h.credentialCounts.reads;
		(credential as Record<string, unknown>).shopId = 'another-shop';
		// Same token: the signature verifies again with the fresh read, and the postback starts once.
		expect(await postForm(h.url, await paidPostback('shop-2'))).toMatchObject({
			receipt: 'accepted',
		});
		expect(h.credentialCounts.reads).toBe(reads + 1);
		expect(h.executions).toHaveLength(2);
	});
});
