/**
 * CHANGELOG.md is written by hand (Keep a Changelog): each change goes under `## [Unreleased]`
 * when it is made, in words a merchant or an operator can act on. The release does not write
 * entries; it only dates them: its hook scripts/release-version.ts (.release-it.json) turns the
 * Unreleased entries into `## [<version>] - <date>` under a new, empty `## [Unreleased]`. `npm run release` refuses to start while Unreleased is empty
 * (scripts/release-check.ts), and publish.yml takes the release notes from the version's section.
 */
const UNRELEASED = /^## \[Unreleased\][^\n]*\n/m;

/** The body of a `## [...]` section whose heading matches, up to the next `## ` heading. */
function section(text: string, heading: RegExp): string | undefined {
	const start = heading.exec(text);
	if (!start) return undefined;
	const rest = text.slice(start.index + start[0].length);
	const next = rest.search(/^## /m);
	return (next === -1 ? rest : rest.slice(0, next)).trim();
}

/** The entries (list items) under `## [Unreleased]`. */
export function unreleasedEntries(text: string): string[] {
	return (section(text, UNRELEASED) ?? '').split('\n').filter((line) => /^\s*[-*] /.test(line));
}

/** The body of the section of `version`, or undefined when the CHANGELOG has none. */
export function versionSection(text: string, version: string): string | undefined {
	const escaped = version.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
	return section(text, new RegExp(`^## \\[${escaped}\\][^\\n]*\\n`, 'm'));
}

/** The CHANGELOG with the Unreleased entries released as `version` on `date` (YYYY-MM-DD). */
export function releaseChangelog(text: string, version: string, date: string): string {
	if (!UNRELEASED.test(text)) throw new Error('CHANGELOG.md has no "## [Unreleased]" section');
	if (versionSection(text, version) !== undefined)
		throw new Error(`CHANGELOG.md already has a section for ${version}`);
	if (unreleasedEntries(text).length === 0)
		throw new Error('CHANGELOG.md: nothing under "## [Unreleased]" to release');
	return text.replace(UNRELEASED, `## [Unreleased]\n\n## [${version}] - ${date}\n`);
}
