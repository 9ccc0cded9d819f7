/**
 * The relay's few HTML pages for people who are not operators (the customer after paying, a
 * visitor of the root): readable on a phone, one inline style, nothing loaded from elsewhere.
 */
export const PAGE_STYLE =
	'body{margin:0;min-height:100vh;display:flex;align-items:center;justify-content:center;' +
	'background:#f4f5f7;color:#1f2328;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}' +
	'main{max-width:28rem;margin:1rem;padding:2rem;background:#fff;border-radius:12px;' +
	'box-shadow:0 1px 3px rgba(0,0,0,.12)}h1{margin:0 0 .5rem;font-size:1.4rem}p{margin:0}';

export const page = (title: string, text: string) =>
	`<!doctype html><html lang="en"><head><meta charset="utf-8">` +
	`<meta name="viewport" content="width=device-width,initial-scale=1"><title>${title}</title>` +
	`<style>${PAGE_STYLE}</style></head><body><main><h1>${title}</h1><p>${text}</p></main></body></html>`;
