#!/usr/bin/env node
// The relay's command. This file only checks the Node.js version, in syntax every Node.js parses,
// before it loads the relay: the relay's store needs node:sqlite, which older Node.js lacks, and
// an import error would say nothing a user can act on.
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
	process.stderr.write(
		'paypalych-relay: needs Node.js 24 or newer, and this is Node.js ' +
			process.versions.node +
			' (' +
			process.execPath +
			').\n' +
			'  On Debian or Ubuntu (their own nodejs package is 18 or 20), install Node.js 24 from NodeSource:\n' +
			'    curl -fsSL https://deb.nodesource.com/setup_24.x | sudo bash -\n' +
			'    sudo apt-get install -y nodejs        # then: node --version prints v24\n' +
			'  Elsewhere: https://nodejs.org/en/download. Under systemd, ExecStart must run that node\n' +
			'  (the unit in deploy/ runs /usr/bin/node, where NodeSource puts it).\n',
	);
	process.exit(1);
}
import('./cli.ts').then(
	(cli: { main: (argv: string[]) => Promise<void> }) => cli.main(process.argv.slice(2)),
	(error: unknown) => {
		process.stderr.write('paypalych-relay: cannot load: ' + String(error) + '\n');
		process.exit(1);
	},
);
