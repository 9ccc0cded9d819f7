/**
 * The credential read kept between calls (nodes/PayPalychTrigger/credential.ts): n8n 2.x builds
 * an isolate for every credential read from a webhook, so a node whose postbacks the service
 * confirms reads it once a minute rather than once a call; and no check is the weaker for it: a
 * postback taken on its signature alone reads afresh, a new token is seen at once, a token the
 * service refuses is never used twice, and an old token's signature is never the last word.
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

	it('a confirming node reads the credential once for many postbacks and their duplicates; another node reads its own', async () => {
		const { h } = await trigger({ event: 'payment', orderCheck: 'billId' });
		const postbacks = [
			await paidPostback('keep-1'),
			await paidPostback('keep-2'),
			await paidPostback('keep-3'),
		];
		for (const postback of postbacks) {
			expect(await postForm(h.url, postback)).toMatchObject({ status: 200, receipt: 'accepted' });
		}
		expect(await postForm(h.url, postbacks[0])).toMatchObject({ receipt: 'duplicate' });
		expect(h.executions).toHaveLength(3);
		expect(h.credentialCounts).toEqual({ reads: 1, authentications: 0 });

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
		// The kept (old) token verifies the copy, but the service refuses the old token.
		expect(await postForm(h.url, forged)).toMatchObject({ status: 503, receipt: 'retry' });
		expect(h.executions).toHaveLength(1);
		expect(h.credentialCounts.reads).toBe(1);
		expect(await postForm(h.url, forged)).toMatchObject({ status: 401, receipt: 'rejected' });
		expect(h.credentialCounts.reads).toBe(2);
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
		expect(h.credentialCounts.reads).toBe(1);
		expect(await postForm(h.url, await paidPostback('fail-2'))).toMatchObject({
			receipt: 'accepted',
		});
		expect(h.credentialCounts.reads).toBe(2);
	});

	it(`a kept read is used for at most CREDENTIAL_KEEP_MS (${CREDENTIAL_KEEP_MS} ms)`, async () => {
		const { h } = await trigger({ event: 'payment', orderCheck: 'billId' });
		expect(await postForm(h.url, await paidPostback('age-1'))).toMatchObject({
			receipt: 'accepted',
		});
		vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + CREDENTIAL_KEEP_MS - 1000 });
		expect(await postForm(h.url, await paidPostback('age-2'))).toMatchObject({
			receipt: 'accepted',
		});
		expect(h.credentialCounts.reads).toBe(1);
		vi.setSystemTime(Date.now() + 2000);
		expect(await postForm(h.url, await paidPostback('age-3'))).toMatchObject({
			receipt: 'accepted',
		});
		expect(h.credentialCounts.reads).toBe(2);
	});
});
