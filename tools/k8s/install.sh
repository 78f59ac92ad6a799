#!/bin/sh
# Install the pinned npm validators (package-lock.json) into tools/k8s/node_modules, once:
# `npm ci` runs again only when the lock file changed. Called by tests/k8s.
set -eu
cd "$(dirname "$0")"
command -v npm >/dev/null 2>&1 || { echo "install.sh: npm is required (Node.js 20+)" >&2; exit 2; }
want="$(sha256sum package-lock.json | cut -d' ' -f1)"
stamp=node_modules/.llmload-lock.sha256
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    exit 0
fi
npm ci --no-audit --no-fund --loglevel=error >&2
echo "$want" > "$stamp"
