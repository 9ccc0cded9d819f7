/**
 * The progress of one npm step of scripts/install-n8n.sh, with an estimate. It reads npm's
 * `--loglevel=http` output on stdin, counts the registry fetches of one kind (package documents
 * while npm resolves the tree, tarballs while it downloads and unpacks), and prints at most one
 * line every few seconds: `install-n8n: n8n 2.41.1: downloading packages: 812 of 2,372 (34%),
 * about 2 min left`. npm's error lines are passed through. Usage:
 *   npm install --loglevel=http ... 2>&1 | node scripts/install-progress.ts <label> <documents|tarballs> [total [about]]
 * Without a total (an n8n version whose size is not known) it prints the count alone; `about`
 * marks a total measured on an earlier install rather than read from the lock file.
 */
import { createInterface } from 'node:readline';

export type Counted = 'documents' | 'tarballs';

// A download (`http fetch GET 200 <url>`), or a tarball npm's cache already holds
// (`http cache <name>@<url> 0ms (cache hit)`).
const FETCH = /\bhttp (?:fetch GET (?:200|304)|cache) (\S+)/;

/**
 * The URL a line of npm's http log fetched, when it is a fetch of the kind counted; else undefined.
 * npm logs one tarball twice (its download, then a cache hit when it unpacks it), so the count is of
 * distinct URLs, not of lines.
 */
export function fetchedUrl(line: string, counted: Counted): string | undefined {
	const found = FETCH.exec(line)?.[1];
	if (!found) return undefined;
	// A cache line names `<package>@<url>`.
	const url = found.slice(Math.max(0, found.indexOf('http')));
	const tarball = url.endsWith('.tgz');
	return (counted === 'tarballs') === tarball ? url : undefined;
}

/** Whether a line of npm's http log is a fetch of the kind counted. */
export function isFetch(line: string, counted: Counted): boolean {
	return fetchedUrl(line, counted) !== undefined;
}

const number = (n: number) => n.toLocaleString('en-US');

function duration(ms: number): string {
	const s = Math.max(1, Math.round(ms / 1000));
	if (s < 90) return `${s} s`;
	return `${Math.round(s / 60)} min`;
}

/**
 * One progress line: the count, the share of the total and the time left at the rate so far. An
 * `estimated` total (a count measured on an earlier install) is said to be one, and a count past
 * it is shown as such rather than as 100%.
 */
export function progressLine(
	label: string,
	done: number,
	total: number | undefined,
	elapsedMs: number,
	estimated = false,
): string {
	if (!total) return `${label}: ${number(done)} so far`;
	if (estimated && done > total)
		return `${label}: ${number(done)} (about ${number(total)} expected; nearly done)`;
	const shown = Math.min(done, total);
	const share = Math.floor((shown / total) * 100);
	let line = `${label}: ${number(shown)} of ${estimated ? 'about ' : ''}${number(total)} (${share}%)`;
	// An estimate only once there is a rate to go by.
	if (shown >= total * 0.05 && shown < total) {
		const left = (elapsedMs / shown) * (total - shown);
		line += `, about ${duration(left)} left`;
	}
	return line;
}

async function main(): Promise<void> {
	const [label = 'npm', counted = 'tarballs', totalText, about] = process.argv.slice(2);
	if (counted !== 'documents' && counted !== 'tarballs')
		throw new Error(`install-progress: count "documents" or "tarballs", not "${counted}"`);
	const total = totalText ? Number(totalText) : undefined;
	const started = Date.now();
	const everyMs = Number(process.env.INSTALL_PROGRESS_EVERY_MS ?? 5_000);
	const seen = new Set<string>();
	let printedAt = 0;
	const print = () => {
		printedAt = Date.now();
		process.stdout.write(
			`install-n8n: ${progressLine(label, seen.size, total, printedAt - started, about === 'about')}\n`,
		);
	};
	for await (const line of createInterface({ input: process.stdin })) {
		if (/^npm (error|ERR!)/.test(line)) process.stdout.write(`${line}\n`);
		const url = fetchedUrl(line, counted as Counted);
		if (url === undefined || seen.has(url)) continue;
		seen.add(url);
		if (Date.now() - printedAt >= everyMs) print();
	}
	// The end of the step: the count, whatever the estimate said.
	process.stdout.write(`install-n8n: ${label}: ${number(seen.size)}, done\n`);
}

if (import.meta.main) await main();
