import { html, raw } from './html.ts';
import type { Html } from './html.ts';

export interface Series {
	name: string;
	/** A CSS class of the console stylesheet that colours the line and its legend mark. */
	cls: string;
	values: readonly number[];
}

const W = 600;
const H = 170;
const PAD = { left: 34, right: 8, top: 10, bottom: 22 };

const hhmm = (t: number) => new Date(t).toISOString().slice(11, 16);

/** A step above `max` that reads well on an axis (1, 2, 5, 10, 20, 50, …). */
function niceMax(max: number): number {
	if (max <= 0) return 1;
	const p = 10 ** Math.floor(Math.log10(max));
	for (const m of [1, 2, 5, 10]) if (m * p >= max) return m * p;
	return 10 * p;
}

/**
 * A line chart as inline SVG, drawn on the server: no script, nothing loaded from elsewhere, and
 * it scales to the width of a phone. `starts` are the bucket start times (UTC labels).
 */
export function lineChart(title: string, starts: readonly number[], series: readonly Series[]): Html {
	const n = starts.length;
	const top = niceMax(Math.max(0, ...series.flatMap((s) => s.values)));
	const x = (i: number) => PAD.left + (n <= 1 ? 0 : (i * (W - PAD.left - PAD.right)) / (n - 1));
	const y = (v: number) => PAD.top + (H - PAD.top - PAD.bottom) * (1 - v / top);
	const num = (v: number) => v.toFixed(1);
	const grid = [0, top / 2, top].map(
		(v) =>
			raw(
				`<line class="grid" x1="${PAD.left}" x2="${W - PAD.right}" y1="${num(y(v))}" y2="${num(y(v))}"/>` +
					`<text class="axis" x="${PAD.left - 4}" y="${num(y(v) + 4)}" text-anchor="end">${Number.isInteger(v) ? v : v.toFixed(1)}</text>`,
			),
	);
	const labelEvery = Math.max(1, Math.ceil(n / 6));
	const labels = starts.map((t, i) =>
		i % labelEvery === 0 ? raw(`<text class="axis" x="${num(x(i))}" y="${H - 6}" text-anchor="middle">${hhmm(t)}</text>`) : '',
	);
	const lines = series.map((s) => {
		const points = s.values.map((v, i) => `${num(x(i))},${num(y(v))}`).join(' ');
		return raw(`<polyline class="line ${s.cls}" points="${points}"/>`);
	});
	const totals = series.map((s) => `${s.name} ${s.values.reduce((a, b) => a + b, 0)}`).join(', ');
	return html`<figure class="chart">
		<svg viewBox="0 0 ${W} ${H}" role="img" aria-label="${title}: ${totals}"><title>${title}</title>${grid}${labels}${lines}</svg>
		<figcaption class="legend">${series.map((s) => html`<span><svg class="mark" viewBox="0 0 10 10" width="10" height="10"><rect class="${s.cls}" width="10" height="10"/></svg> ${s.name} <b>${s.values.reduce((a, b) => a + b, 0)}</b></span>`)}</figcaption>
	</figure>`;
}
