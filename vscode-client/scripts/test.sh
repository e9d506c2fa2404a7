#!/usr/bin/env bash
# Builds the VS Code extension and runs every test of it: type check, unit tests (node's test
# runner; the VS Code API stubbed), the flame graph page in headless Chromium (playwright-core
# driving Debian's chromium), and the packaged .vsix. Exits non-zero on any failure; the last
# line says how many tests passed and failed.
#
# Dependencies: `npm ci` when node_modules is missing or older than package-lock.json (always
# with --ci or CI=true); Chromium from Debian (`apt-get install chromium`, installed here when
# running as root), or the browser named by $CHROMIUM. Screenshots go to build/screenshots/.
set -uo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
log() { printf '== %s (%ds)\n' "$*" $((SECONDS - start)); }
fail() { echo "error: $*" >&2; echo "0 passed, 1 failed"; exit 1; }

force_ci=0
[[ "${1:-}" == "--ci" || "${CI:-}" == "true" ]] && force_ci=1

command -v node >/dev/null || fail "node (20 or newer) is needed"
node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' || fail "node 20 or newer is needed, not $(node --version)"

if ((force_ci)) || [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
  log "npm ci"
  npm ci --no-audit --no-fund --loglevel=error || fail "npm ci failed"
fi

export CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
if [[ ! -x "$CHROMIUM" ]]; then
  if [[ $(id -u) -eq 0 && "$CHROMIUM" == /usr/bin/chromium ]]; then
    log "apt-get install chromium"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium) || fail "could not install chromium"
  else
    fail "Chromium not found at $CHROMIUM: apt-get install chromium (or set CHROMIUM)"
  fi
fi

log "type check"
npx tsc -p . --noEmit || fail "type errors"

log "build (production bundles, tests)"
rm -rf dist build/test
node scripts/build.mjs --production --tests || fail "build failed"

log "package the .vsix"
rm -f build/dapprof.vsix
npx vsce package --skip-license --allow-missing-repository --no-rewrite-relative-links -o build/dapprof.vsix >build/vsce.log 2>&1 || { cat build/vsce.log; fail "vsce package failed"; }

log "tests"
mkdir -p build
node --test --test-timeout=180000 \
  --test-reporter=spec --test-reporter-destination=stdout \
  --test-reporter=tap --test-reporter-destination=build/test-results.tap \
  build/test/unit/ build/test/browser/
rc=$?
passed=$(grep -E '^# pass ' build/test-results.tap | awk '{print $3}')
failed=$(grep -E '^# fail ' build/test-results.tap | awk '{print $3}')
log "done"
echo "screenshots: build/screenshots/"
if [[ -z "$passed" || -z "$failed" ]]; then
  echo "0 passed, 1 failed"
  exit 1
fi
echo "${passed} passed, ${failed} failed"
((rc == 0 && failed == 0)) || exit 1
