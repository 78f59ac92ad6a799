#!/usr/bin/env bash
# System packages the tests use beyond the Python venv, installed only when missing:
#   prometheus  a real Prometheus server and promtool (tests/e2e/test_prometheus*.py, promtool checks)
#   chromium    headless browser for the HTML report test
#   cmake, g++  to build llama.cpp's llama-server once (scripts/llama-server.sh, tests/real_server)
# Idempotent. As root it installs with apt-get; otherwise it prints what is missing and exits 0
# (the tests that need a missing tool skip, saying why).
set -euo pipefail

declare -A COMMAND_OF=([prometheus]=promtool [chromium]=chromium [cmake]=cmake [g++]=g++)
missing=()
for package in prometheus chromium cmake g++; do
    if command -v "${COMMAND_OF[$package]}" >/dev/null 2>&1; then
        echo "install-test-deps: $package already installed ($(command -v "${COMMAND_OF[$package]}"))"
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
    command -v "${COMMAND_OF[$package]}" >/dev/null || { echo "install-test-deps: $package failed"; exit 1; }
    echo "install-test-deps: installed $package"
done
