const { src, dest } = require('gulp');

// Copies what tsc does not: the icons (one folder, icons/, shared by both nodes and the credential)
// and any other static node file into dist/.
function buildIcons() {
	return src(['icons/*.{png,svg}', 'nodes/**/*.{png,svg}', 'credentials/**/*.{png,svg}'], {
		base: '.',
		encoding: false,
	}).pipe(dest('dist'));
}

exports['build:icons'] = buildIcons;
