// What a merchant reads in the editor about the trigger: the trigger panel, the notices, the
// events as the nodes panel lists them and the tooltips. The editor itself: test/e2e/editor.test.ts.
import type { INodeProperties, INodePropertyOptions, TriggerPanelDefinition } from 'n8n-workflow';
import { describe, expect, it } from 'vitest';
import { PayPalychTrigger } from '../../dist/nodes/PayPalychTrigger/PayPalychTrigger.node.js';

const description = new PayPalychTrigger().description;
const panel = description.triggerPanel as TriggerPanelDefinition;
const property = (name: string) =>
	description.properties.find((p) => p.name === name) as INodeProperties;
const events = property('event').options as INodePropertyOptions[];

/** The text a reader sees: tags dropped, the guide's link text dropped. */
const plain = (html: string) =>
	html
		.replace(/<a [^>]*>[^<]*<\/a>/g, '')
		.replace(/<[^>]+>/g, '')
		.trim();
/** Sentences: a full stop, question or exclamation mark followed by a space or the end. */
const sentences = (html: string) =>
	plain(html)
		.split(/[.!?](?:\s+|$)/)
		.filter((s) => s.trim());

const notices = description.properties.filter((p) => p.type === 'notice');
const panelTexts = (): Array<[string, string]> => {
	const help = panel.executionsHelp as { active: string; inactive: string };
	return [
		['header', panel.header ?? ''],
		['executionsHelp.inactive', help.inactive],
		['executionsHelp.active', help.active],
		['activationHint', panel.activationHint as string],
	];
};

describe('the trigger panel and the notices', () => {
	it('say in at most two sentences which URL goes into which field, with a link to the guide', () => {
		expect(notices.map((n) => n.name).sort()).toEqual(
			['chargeback', 'fail', 'payment', 'payout', 'refund', 'success'].map((e) => `${e}Notice`),
		);
		const fields: Record<string, string> = {
			payment: 'Result URL',
			payout: 'payout webhook URL',
			success: 'Success URL',
			fail: 'Fail URL',
			refund: 'Refund URL',
			chargeback: 'Chargeback URL',
		};
		for (const notice of notices) {
			const text = notice.displayName;
			expect(sentences(text).length, text).toBeLessThanOrEqual(2);
			expect(text, notice.name).toContain(fields[notice.name.replace('Notice', '')]);
			expect(text).toMatch(/Test URL .*Production URL/);
			expect(text).toMatch(/<a href="https:\/\/github\.com\/[^"]+\/docs\/merchant\/trigger\.md/);
			// n8n drops bold in a notice: the field's name must read without it.
			expect(text).not.toMatch(/<b>|<strong>/);
		}
		for (const [where, text] of panelTexts()) {
			expect(sentences(text).length, where).toBeLessThanOrEqual(2);
		}
		expect(panelTexts()[1][1]).toContain('Result URL');
	});

	it("speaks of no button of one n8n version and of no URL 'above'", () => {
		const all = [...notices.map((n) => n.displayName), ...panelTexts().map(([, t]) => t)];
		for (const text of all) {
			expect(text).not.toMatch(/Listen for test event|Execute step|Test step/i);
			expect(text).not.toMatch(/URL above/i);
		}
	});
});

describe('the events in the nodes panel', () => {
	it('read as events ("On payment reported"), Payment first, with the values workflows saved', () => {
		// n8n 2.x names a trigger's action by its `action`, else "On " + the name in lower case
		// (nodeCreator's formatTriggerActionName); n8n 1.x by "On " + the name in title case.
		expect(events.map((e) => e.action)).toEqual([
			'On payment reported',
			'On refund reported',
			'On chargeback reported',
			'On payout reported',
			'On customer returned after paying',
			'On customer returned after a failed payment',
		]);
		for (const e of events) expect(`On ${e.name.toLowerCase()}`).toBe(e.action);
		expect(events.map((e) => e.value).sort()).toEqual(
			['chargeback', 'fail', 'payment', 'payout', 'refund', 'success'].sort(),
		);
		expect(property('event').default).toBe('payment');
		// The field each URL goes into is in the description, never in the name.
		for (const e of events) {
			expect(e.name).not.toMatch(/URL|\(/);
			expect(e.description).toMatch(/Paste the URL as the .*URL\.$/);
		}
	});
});

describe('tooltips', () => {
	it('are one sentence in a merchant words: no API paths, no raw field names', () => {
		const described = description.properties.filter((p) => p.type !== 'notice' && p.description);
		expect(described.length).toBeGreaterThan(5);
		for (const p of described) {
			const text = p.description as string;
			expect(sentences(text).length, p.name).toBe(1);
			expect(text, p.name).not.toMatch(/payment\/status|payout\/status|TrsId|InvId|OutSum/);
		}
	});
});
