// n8n's community-node starter settings (n8n-io/n8n-nodes-starter, @n8n/node-cli's template).
module.exports = {
	semi: true,
	trailingComma: 'all',
	bracketSpacing: true,
	useTabs: true,
	tabWidth: 2,
	arrowParens: 'always',
	singleQuote: true,
	quoteProps: 'as-needed',
	endOfLine: 'lf',
	printWidth: 100,
	// Not n8n's: the relay console's html`…` templates are its output; formatting them would change the pages.
	embeddedLanguageFormatting: 'off',
};
