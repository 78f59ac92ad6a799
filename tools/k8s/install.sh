#!/bin/sh
# Install the pinned npm validators (package-lock.json) into tools/k8s/node_modules, once:
# `npm ci` runs again only when the lock file changed. Called by tests/k8s, from each pytest
# worker at once: the lock makes the second wait for the first, as two `npm ci` in one folder
# delete each other's files (seen in CI as ENOTEMPTY).
set -eu
cd "$(dirname "$0")"
command -v npm >/dev/null 2>&1 || { echo "install.sh: npm is required (Node.js 20+)" >&2; exit 2; }
exec 9>.install.lock
flock 9
want="$(sha256sum package-lock.json | cut -d' ' -f1)"
stamp=node_modules/.llmload-lock.sha256
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    exit 0
fi
npm ci --no-audit --no-fund --loglevel=error >&2
echo "$want" > "$stamp"
