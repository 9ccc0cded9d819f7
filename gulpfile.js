const { src, dest } = require('gulp');

// Copies what tsc does not: node icons (and any other static node file) into dist/.
function buildIcons() {
	return src(['nodes/**/*.{png,svg}', 'credentials/**/*.{png,svg}'], { base: '.', encoding: false }).pipe(dest('dist'));
}

exports['build:icons'] = buildIcons;
