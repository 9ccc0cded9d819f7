import { html } from '../html.ts';
import { LOGIN, page } from '../layout.ts';

export function loginPage(
	csrf: string,
	next: string | undefined,
	errors: readonly string[] = [],
): string {
	return page(
		{ title: 'Log in', errors },
		html`<div class="login card">
			<h1>Relay console</h1>
			<p class="muted">Give the relay's admin token (<code>RELAY_ADMIN_TOKEN</code>). The browser keeps a signed login cookie, never the token.</p>
			<form method="post" action="${LOGIN}">
				<input type="hidden" name="_csrf" value="${csrf}">
				${next ? html`<input type="hidden" name="next" value="${next}">` : ''}
				<label>Admin token <input type="password" name="token" autocomplete="off" required autofocus></label>
				<button type="submit">Log in</button>
			</form>
		</div>`,
	);
}
