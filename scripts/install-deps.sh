#!/usr/bin/env bash
# Installs the Debian 12 packages dapprof needs to build and test, if any are missing.
set -euo pipefail
packages=(
  build-essential cmake pkg-config git
  # scripts/test.sh keeps a compiler cache beside the Debian unstable root's.
  ccache
  libasio-dev nlohmann-json3-dev libfmt-dev libspdlog-dev libcli11-dev libxxhash-dev
  libunwind-dev libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-dev python3-debugpy python3-jsonschema python3-pytest python3-bytecode python3-typing-extensions
  chromium nodejs
  # The VS Code end-to-end test (vscode-client/scripts/e2e.sh): Debian's rg stands in for the one
  # code-server's install would download; code-server's kerberos module compiles against krb5.
  ripgrep libkrb5-dev
  # The fuzz targets (tests/fuzz/run.sh): clang's libFuzzer and sanitizer runtimes.
  clang libclang-rt-14-dev
  # The Debian unstable root with CPython 3.13-3.15 and debugpy 1.8 (scripts/debian-unstable-root.sh).
  debootstrap
  # The release preset's packages (cmake/Packaging.cmake) and their tests (tests/package/):
  # liblzma's static archive (libunwind's needs it), the man page from --help, the .deb's
  # dependencies (dpkg-shlibdeps), lintian, and `file`.
  liblzma-dev help2man dpkg-dev lintian file
  # Names for stripped code (src/sampler/native): libdebuginfod's header (the library is loaded at
  # run time), and the debuginfod server and binutils the tests split and serve debug files with.
  libdebuginfod-dev debuginfod binutils
  # The pprof writer (src/formats/pprof.cpp): protobuf's library and protoc, which generate its
  # classes from pprof's own profile.proto, installed by golang-github-google-pprof-dev with
  # pprof's source; zlib for the gzip. The tests decode with protoc and build Go's pprof from that
  # source (golang-go and the packages pprof imports: readline, demangle).
  libprotobuf-dev protobuf-compiler zlib1g-dev golang-github-google-pprof-dev
  golang-go golang-github-chzyer-readline-dev golang-github-ianlancetaylor-demangle-dev
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "missing packages: ${missing[*]} (run as root, or: sudo apt-get install ${missing[*]})" >&2
    exit 1
  fi
  echo "installing: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
