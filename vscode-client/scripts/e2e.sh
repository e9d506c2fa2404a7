#!/usr/bin/env bash
# End-to-end test of the extension in a real VS Code: installs code-server and playwright-core
# (test/e2e/package-lock.json, kept apart from the extension's own dependencies since code-server
# is about 320 MB), packages the .vsix, and runs test/e2e/e2e.test.ts: code-server with the
# extension installed, driven in Debian's headless Chromium, debugging and profiling
# test/e2e/fixture/app.py through the dapprof executable named by DAPPROF_BIN; then
# test/e2e/profile-only.test.ts, a code-server of its own, profiling without a debugger
# (dapprof stdio --profile-only); then test/e2e/async-tasks.test.ts, the asyncio Tasks view of a
# program on CPython 3.14; then test/e2e/attached.test.ts, Start Profiling in a `debugpy` session
# (the type contributed by the test-only extension test/e2e/debugpy-type/, packaged here); then
# test/e2e/kept-runs.test.ts, runs that outlive their session: exported and compared after it
# ended, reopened after a window reload; then test/e2e/container.test.ts, an attach to
# `debugpy --listen` in a container (a PID namespace of its own, so root is needed; skipped
# otherwise), profiled under the program's host pid.
# E2E_TESTS="e2e", "profile-only", "async-tasks", "attached", "kept-runs" or "container" (or
# several) runs only those. With DAPPROF_PLATFORM_VSIX (the release build's dapprof-linux-x64-VERSION.vsix), then
# test/e2e/bundled.test.ts: that .vsix alone, without dapprof.path, runs the dapprof inside it.
#
#   DAPPROF_BIN=build/default/src/dapprof [DAPPROF_PLATFORM_VSIX=...vsix] [E2E_TESTS=profile-only] vscode-client/scripts/e2e.sh
#
# Needs Debian's chromium, ripgrep (its rg stands in for the one code-server would download)
# and python3-debugpy; when run as root the missing ones are installed. Screenshots go to
# build/e2e-screenshots/ of the repository; the run directory (code-server's settings, logs and
# the workspace) to build/e2e/run/, kept when the test fails. Exits non-zero on any failure.
set -uo pipefail
start=$SECONDS
log() { printf '== e2e: %s (%ds)\n' "$*" $((SECONDS - start)); }
fail() { echo "error: $*" >&2; exit 1; }

# A relative DAPPROF_BIN is relative to the caller's directory.
[[ -n "${DAPPROF_BIN:-}" ]] || fail "set DAPPROF_BIN to the dapprof executable (e.g. DAPPROF_BIN=build/default/src/dapprof)"
DAPPROF_BIN=$(realpath -e -- "$DAPPROF_BIN") || fail "DAPPROF_BIN: no such file"
[[ -f "$DAPPROF_BIN" && -x "$DAPPROF_BIN" ]] || fail "$DAPPROF_BIN is not an executable file"
export DAPPROF_BIN
if [[ -n "${DAPPROF_PLATFORM_VSIX:-}" ]]; then
  DAPPROF_PLATFORM_VSIX=$(realpath -e -- "$DAPPROF_PLATFORM_VSIX") || fail "DAPPROF_PLATFORM_VSIX: no such file"
  export DAPPROF_PLATFORM_VSIX
fi

cd "$(dirname "$0")/.."
client=$PWD
repo=$(cd .. && pwd)

command -v node >/dev/null || fail "node (20 or newer) is needed"
node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' || fail "node 20 or newer is needed, not $(node --version)"

export CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
missing=()
[[ -x "$CHROMIUM" || "$CHROMIUM" != /usr/bin/chromium ]] || missing+=(chromium)
[[ -x /usr/bin/rg ]] || missing+=(ripgrep)
/usr/bin/python3 -c 'import debugpy' 2>/dev/null || missing+=(python3-debugpy)
if ((${#missing[@]})); then
  [[ $(id -u) -eq 0 ]] || fail "missing Debian packages: ${missing[*]} (apt-get install ${missing[*]})"
  log "apt-get install ${missing[*]}"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}") || fail "could not install ${missing[*]}"
fi
[[ -x "$CHROMIUM" ]] || fail "Chromium not found at $CHROMIUM"

# The extension's own dependencies (esbuild, vsce), as scripts/test.sh installs them.
if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
  log "npm ci (extension)"
  npm ci --no-audit --no-fund --loglevel=error || fail "npm ci failed"
fi

# scripts/test.sh has just packaged it when both run; otherwise (or if anything changed since) package.
if [[ ! -f build/dapprof.vsix ]] || [[ -n $(find src media scripts/build.mjs package.json package-lock.json README.md .vscodeignore -newer build/dapprof.vsix -print -quit) ]]; then
  log "package the .vsix"
  mkdir -p build
  npm run --silent package >build/e2e-vsce.log 2>&1 || { cat build/e2e-vsce.log; fail "packaging the .vsix failed"; }
fi

e2e=$client/test/e2e
if [[ ! -f $e2e/node_modules/.package-lock.json || $e2e/package-lock.json -nt $e2e/node_modules/.package-lock.json ]]; then
  log "npm ci (code-server, playwright-core)"
  # @vscode/ripgrep's install script downloads rg from GitHub unless its cache holds the archive:
  # Debian's rg is put there. code-server's install script refuses to run as root without
  # unsafe-perm; node-pty's runs `npx node-gyp`, which asks for confirmation without `yes`. The
  # native modules (spdlog, kerberos, node-pty, ...) compile from source: JOBS=max runs make -j.
  npm_tmp=$repo/build/e2e/npm-tmp
  rm -rf "$npm_tmp"
  mkdir -p "$npm_tmp/rg" "$npm_tmp/vscode-ripgrep-cache-1.15.11"
  cp /usr/bin/rg "$npm_tmp/rg/rg"
  tar -C "$npm_tmp/rg" -czf "$npm_tmp/vscode-ripgrep-cache-1.15.11/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" rg
  (cd "$e2e" && TMPDIR=$npm_tmp npm_config_unsafe_perm=true npm_config_yes=true JOBS=max \
    npm ci --no-audit --no-fund --loglevel=error) >"$repo/build/e2e/npm-ci.log" 2>&1
  rc=$?
  # npm 11 warns that it does not know unsafe-perm; code-server's script reads it all the same.
  grep -v 'Unknown env config "unsafe-perm"' "$repo/build/e2e/npm-ci.log"
  ((rc == 0)) && [[ -x $e2e/node_modules/.bin/code-server ]] || fail "npm ci in test/e2e failed (build/e2e/npm-ci.log)"
  rm -rf "$npm_tmp"
fi
export CODE_SERVER_BIN=$e2e/node_modules/.bin/code-server

log "bundle the tests"
bundles=$e2e/node_modules/.e2e
node_modules/.bin/esbuild test/e2e/e2e.test.ts test/e2e/profile-only.test.ts test/e2e/async-tasks.test.ts test/e2e/attached.test.ts test/e2e/kept-runs.test.ts test/e2e/container.test.ts test/e2e/bundled.test.ts --bundle --platform=node --format=cjs \
  --target=node20 --external:playwright-core --sourcemap=inline --log-level=warning --outdir="$bundles" \
  || fail "bundling the tests failed"

export E2E_CLIENT_ROOT=$client
export E2E_RUN_DIR=$repo/build/e2e/run
export E2E_SCREENSHOTS=$repo/build/e2e-screenshots
export DAPPROF_VSIX=$client/build/dapprof.vsix
# If the test is killed before its own cleanup, end code-server's process group here. The test
# writes the group's id once code-server runs, and removes it once the group has ended.
rm -f "$E2E_RUN_DIR/code-server.pgid" "$E2E_RUN_DIR-profile/code-server.pgid" "$E2E_RUN_DIR-tasks/code-server.pgid" "$E2E_RUN_DIR-attached/code-server.pgid" "$E2E_RUN_DIR-kept/code-server.pgid" "$E2E_RUN_DIR-container/code-server.pgid" "$E2E_RUN_DIR-bundled/code-server.pgid"
cleanup() {
  local f
  for f in "$E2E_RUN_DIR/code-server.pgid" "$E2E_RUN_DIR-profile/code-server.pgid" "$E2E_RUN_DIR-tasks/code-server.pgid" "$E2E_RUN_DIR-attached/code-server.pgid" "$E2E_RUN_DIR-kept/code-server.pgid" "$E2E_RUN_DIR-container/code-server.pgid" "$E2E_RUN_DIR-bundled/code-server.pgid"; do
    [[ -f $f ]] && kill -KILL -- "-$(cat "$f")" 2>/dev/null
  done
  return 0
}
trap cleanup EXIT

tests=" ${E2E_TESTS:-e2e profile-only async-tasks attached kept-runs container} "
rc=0
if [[ $tests == *" e2e "* ]]; then
  log "run"
  timeout --kill-after=10 300 node --test --test-reporter=spec "$bundles/e2e.test.js"
  rc=$?
  cleanup
fi
if [[ $tests == *" profile-only "* ]]; then
  # Its own code-server; it adds its screenshots to those of e2e.test.js.
  [[ $tests == *" e2e "* ]] || { rm -rf "$E2E_SCREENSHOTS"; mkdir -p "$E2E_SCREENSHOTS"; }
  log "run the profile-only steps"
  timeout --kill-after=10 240 node --test --test-reporter=spec "$bundles/profile-only.test.js"
  prc=$?
  cleanup
fi
if [[ $tests == *" async-tasks "* ]]; then
  # Its own code-server too; it adds its screenshots to the others'.
  [[ $tests == *" e2e "* || $tests == *" profile-only "* ]] || { rm -rf "$E2E_SCREENSHOTS"; mkdir -p "$E2E_SCREENSHOTS"; }
  log "run the asyncio Tasks steps"
  timeout --kill-after=10 240 node --test --test-reporter=spec "$bundles/async-tasks.test.js"
  trc=$?
  cleanup
fi
if [[ $tests == *" attached "* ]]; then
  # Its own code-server too; it adds its screenshots to the others'.
  [[ $tests == *" e2e "* || $tests == *" profile-only "* || $tests == *" async-tasks "* ]] || { rm -rf "$E2E_SCREENSHOTS"; mkdir -p "$E2E_SCREENSHOTS"; }
  # The test-only extension that stands in for the Python extension's debugger.
  log "package the test-only debugpy extension"
  export DEBUGPY_TYPE_VSIX=$repo/build/e2e/debugpy-type.vsix
  mkdir -p "$repo/build/e2e"
  (cd test/e2e/debugpy-type && "$client/node_modules/.bin/vsce" package --skip-license --allow-missing-repository -o "$DEBUGPY_TYPE_VSIX") >"$repo/build/e2e/debugpy-type-vsce.log" 2>&1 \
    || { cat "$repo/build/e2e/debugpy-type-vsce.log"; fail "packaging test/e2e/debugpy-type failed"; }
  log "run the debugpy-session steps"
  timeout --kill-after=10 240 node --test --test-reporter=spec "$bundles/attached.test.js"
  arc=$?
  cleanup
fi
if [[ $tests == *" kept-runs "* ]]; then
  # Its own code-server too; it adds its screenshots to the others'.
  [[ $tests == *" e2e "* || $tests == *" profile-only "* || $tests == *" async-tasks "* || $tests == *" attached "* ]] || { rm -rf "$E2E_SCREENSHOTS"; mkdir -p "$E2E_SCREENSHOTS"; }
  log "run the kept-runs steps"
  timeout --kill-after=10 240 node --test --test-reporter=spec "$bundles/kept-runs.test.js"
  krc=$?
  cleanup
fi
if [[ $tests == *" container "* ]]; then
  # Its own code-server too; it adds its screenshots to the others'.
  [[ $tests == *" e2e "* || $tests == *" profile-only "* || $tests == *" async-tasks "* || $tests == *" attached "* || $tests == *" kept-runs "* ]] || { rm -rf "$E2E_SCREENSHOTS"; mkdir -p "$E2E_SCREENSHOTS"; }
  log "run the container steps"
  timeout --kill-after=10 240 node --test --test-reporter=spec "$bundles/container.test.js"
  crc=$?
  cleanup
fi
if [[ -n "${DAPPROF_PLATFORM_VSIX:-}" ]]; then
  log "run the platform .vsix alone"
  timeout --kill-after=10 240 node --test --test-reporter=spec "$bundles/bundled.test.js"
  brc=$?
  cleanup
fi
log "done"
echo "screenshots: $E2E_SCREENSHOTS/"
if ((rc != 0)); then
  echo "e2e failed; code-server's log, settings and workspace are in $E2E_RUN_DIR/" >&2
  exit 1
fi
if ((${prc:-0} != 0)); then
  echo "the profile-only e2e failed; its run directory is $E2E_RUN_DIR-profile/" >&2
  exit 1
fi
if ((${trc:-0} != 0)); then
  echo "the asyncio Tasks e2e failed; its run directory is $E2E_RUN_DIR-tasks/" >&2
  exit 1
fi
if ((${arc:-0} != 0)); then
  echo "the debugpy-session e2e failed; its run directory is $E2E_RUN_DIR-attached/" >&2
  exit 1
fi
if ((${krc:-0} != 0)); then
  echo "the kept-runs e2e failed; its run directory is $E2E_RUN_DIR-kept/" >&2
  exit 1
fi
if ((${crc:-0} != 0)); then
  echo "the container e2e failed; its run directory is $E2E_RUN_DIR-container/" >&2
  exit 1
fi
if ((${brc:-0} != 0)); then
  echo "e2e of the platform .vsix failed; its run directory is $E2E_RUN_DIR-bundled/" >&2
  exit 1
fi
rm -rf "$E2E_RUN_DIR" "$E2E_RUN_DIR-profile" "$E2E_RUN_DIR-tasks" "$E2E_RUN_DIR-attached" "$E2E_RUN_DIR-kept" "$E2E_RUN_DIR-container" "$E2E_RUN_DIR-bundled"
