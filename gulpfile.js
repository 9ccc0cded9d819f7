const { src, dest } = require('gulp');

// Copies what tsc does not: the icons (one folder, icons/, shared by both nodes and the credential),
// any other static node file, and the output schemas n8n's editor reads beside a node
// (nodes/<Node>/__schema__/v<version>/<resource>/<operation>.json) into dist/.
function buildIcons() {
	return src(
		[
			'icons/*.{png,svg}',
			'nodes/**/*.{png,svg}',
			'nodes/**/__schema__/**/*.json',
			'credentials/**/*.{png,svg}',
		],
		{
			base: '.',
			encoding: false,
		},
	).pipe(dest('dist'));
}

exports['build:icons'] = buildIcons;
