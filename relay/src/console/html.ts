/**
 * Server-side HTML with escaping by default: every value interpolated into `html` is escaped
 * unless it is itself the result of `html` (or `raw`, kept for markup the console builds itself).
 * Arrays are joined. There is no other way to put text into a page, so a field such as `custom`
 * or `InvId` always renders as text.
 */
export class Html {
	readonly value: string;
	constructor(value: string) {
		this.value = value;
	}
	toString(): string {
		return this.value;
	}
}

const ESCAPES: Record<string, string> = {
	'&': '&amp;',
	'<': '&lt;',
	'>': '&gt;',
	'"': '&quot;',
	"'": '&#39;',
	'`': '&#96;',
};

export function escapeHtml(text: string): string {
	return text.replace(/[&<>"'`]/g, (c) => ESCAPES[c]);
}

export type Interpolation =
	| Html
	| string
	| number
	| boolean
	| null
	| undefined
	| readonly Interpolation[];

function render(value: Interpolation): string {
	if (value === null || value === undefined || value === false) return '';
	if (value instanceof Html) return value.value;
	if (Array.isArray(value)) return value.map(render).join('');
	return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Interpolation[]): Html {
	let out = strings[0];
	for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1];
	return new Html(out);
}

/** Markup that is already safe (built by the console from numbers and fixed strings). */
export const raw = (markup: string): Html => new Html(markup);
