#!/usr/bin/env bash
# System packages the tests use beyond the Python venv, installed only when missing:
#   prometheus  a real Prometheus server and promtool (tests/e2e/test_prometheus*.py, promtool checks)
#   chromium    headless browser for the HTML report test
#   postgresql  a real PostgreSQL server for the results store's tests (tests/support/postgres.py)
#   cmake, g++  to build llama.cpp's llama-server once (scripts/llama-server.sh, tests/real_server)
#   faketime    libfaketime, a worker's wall clock set ahead (tests/e2e/test_fleet_netns.py)
#   valgrind    callgrind's instruction counts of the master's merge (bench/master_scale.py)
# Idempotent. As root it installs with apt-get; otherwise it prints what is missing and exits 0
# (the tests that need a missing tool skip, saying why).
set -euo pipefail

declare -A COMMAND_OF=([prometheus]=promtool [chromium]=chromium [postgresql]=initdb [cmake]=cmake [g++]=g++ [faketime]=faketime [valgrind]=valgrind)
# Where a package's program is: on PATH, or where Debian keeps PostgreSQL's server programs.
found() { command -v "$1" 2>/dev/null || compgen -G "/usr/lib/postgresql/*/bin/$1" | tail -1; }
missing=()
for package in prometheus chromium postgresql cmake g++ faketime valgrind; do
    if [ -n "$(found "${COMMAND_OF[$package]}")" ]; then
        echo "install-test-deps: $package already installed ($(found "${COMMAND_OF[$package]}"))"
    else
        missing+=("$package")
    fi
done

if [ ${#missing[@]} -eq 0 ]; then
    echo "install-test-deps: nothing to do"
    exit 0
fi
if [ "${EUID}" -ne 0 ]; then
    echo "install-test-deps: missing ${missing[*]}; run as root to install: apt-get install -y ${missing[*]}"
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-test-deps: missing ${missing[*]} and no apt-get here; install them by hand"
    exit 0
fi
echo "install-test-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
for package in "${missing[@]}"; do
    [ -n "$(found "${COMMAND_OF[$package]}")" ] || { echo "install-test-deps: $package failed"; exit 1; }
    echo "install-test-deps: installed $package"
done
