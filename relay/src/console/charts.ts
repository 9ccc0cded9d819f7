import { escapeHtml, html, raw } from './html.ts';
import type { Html } from './html.ts';

export interface Series {
	name: string;
	/** A CSS class of the console stylesheet that colours the line and its legend mark. */
	cls: string;
	values: readonly number[];
}

const W = 600;
const H = 170;
const PAD = { left: 40, right: 8, top: 12, bottom: 26 };

const hhmm = (t: number) => new Date(t).toISOString().slice(11, 16);

/** A step above `max` that reads well on an axis (1, 2, 5, 10, 20, 50, …). */
function niceMax(max: number): number {
	if (max <= 0) return 1;
	const p = 10 ** Math.floor(Math.log10(max));
	for (const m of [1, 2, 5, 10]) if (m * p >= max) return m * p;
	return 10 * p;
}

/**
 * A bar chart as inline SVG, drawn on the server: one group of bars per bucket, one bar per series
 * (bars never hide each other the way lines do). No script, nothing loaded from elsewhere, and it
 * scales to the width of a phone. `starts` are the bucket start times (UTC labels).
 */
export function barChart(
	title: string,
	starts: readonly number[],
	series: readonly Series[],
): Html {
	const n = starts.length;
	const top = niceMax(Math.max(0, ...series.flatMap((s) => s.values)));
	const plotW = W - PAD.left - PAD.right;
	const plotH = H - PAD.top - PAD.bottom;
	const group = plotW / Math.max(1, n);
	const bar = (group * 0.8) / Math.max(1, series.length);
	const y = (v: number) => PAD.top + plotH * (1 - v / top);
	const num = (v: number) => v.toFixed(1);
	const ticks = top % 2 === 0 ? [0, top / 2, top] : [0, top];
	const grid = ticks.map((v) =>
		raw(
			`<line class="grid" x1="${PAD.left}" x2="${W - PAD.right}" y1="${num(y(v))}" y2="${num(y(v))}"/>` +
				`<text class="axis" x="${PAD.left - 4}" y="${num(y(v) + 4)}" text-anchor="end">${v}</text>`,
		),
	);
	const labelEvery = Math.max(1, Math.ceil(n / 6));
	const labels = starts.map((t, i) =>
		i % labelEvery === 0
			? raw(
					`<text class="axis" x="${num(PAD.left + (i + 0.5) * group)}" y="${H - 6}" text-anchor="middle">${hhmm(t)}</text>`,
				)
			: '',
	);
	const bars = series.map((s, j) =>
		s.values.map((v, i) =>
			v > 0
				? raw(
						`<rect class="${s.cls}" x="${num(PAD.left + i * group + group * 0.1 + j * bar)}" y="${num(y(v))}" width="${num(bar)}" height="${num(y(0) - y(v))}"><title>${hhmm(starts[i])} ${escapeHtml(s.name)}: ${v}</title></rect>`,
					)
				: '',
		),
	);
	const total = (s: Series) => s.values.reduce((a, b) => a + b, 0);
	return html`<figure class="chart">
		<svg viewBox="0 0 ${W} ${H}" role="img" aria-label="${title}: ${series.map((s) => `${s.name} ${total(s)}`).join(', ')}">${grid}${labels}${bars}</svg>
		<figcaption class="legend">${series.map((s) => html`<span><svg class="mark" viewBox="0 0 10 10" width="10" height="10"><rect class="${s.cls}" width="10" height="10"/></svg> ${s.name} <b>${total(s)}</b></span>`)}</figcaption>
	</figure>`;
}
