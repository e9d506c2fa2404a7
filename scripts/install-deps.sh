#!/usr/bin/env bash
# Installs the Debian 12 packages dapprof needs, if any are missing.
#
#   scripts/install-deps.sh [demo|all|arm64] [--list]
#
#   demo  what building dapprof and running scripts/demo.sh need (the demo runs this)
#   all   that and what the tests need (the default; scripts/test.sh runs this)
#   arm64 what building dapprof and running it need, and the cross compiler, the arm64 (multiarch
#         :arm64) libraries and qemu-user for the release-arm64 preset (not part of `all`)
#   --list  print the part's packages, one a line, and install nothing
#
# The demo's part is kept small on purpose: on a fresh machine the packages only the tests use
# (a browser, Go, clang, lintian...) took most of the demo's time.
set -euo pipefail
what=all
list=0
for arg in "$@"; do
  case "$arg" in
    --list) list=1 ;;
    *) what=$arg ;;
  esac
done
# Building dapprof (every preset) and the demo: the compiler, the libraries the daemon links, and
# Debian's python3 with debugpy, which runs debugpy's adapter and the demo's program and client.
build_packages=(
  build-essential cmake ninja-build pkg-config git
  libasio-dev nlohmann-json3-dev libfmt-dev libspdlog-dev libcli11-dev libxxhash-dev libunwind-dev
  # The pprof writer (src/formats/pprof.cpp): protobuf's library and protoc, which generate its
  # classes from pprof's own profile.proto, installed by golang-github-google-pprof-dev with
  # pprof's source; zlib for the gzip.
  libprotobuf-dev protobuf-compiler zlib1g-dev golang-github-google-pprof-dev
  # Names for stripped code (src/sampler/native): liblzma unpacks MiniDebugInfo; libdebuginfod's
  # header (the library itself is loaded at run time, when installed).
  liblzma-dev libdebuginfod-dev
  python3 python3-debugpy
)
test_packages=(
  # scripts/test.sh keeps a compiler cache beside the Debian unstable root's.
  ccache
  libgtest-dev libgmock-dev libbenchmark-dev
  python3-dev python3-jsonschema python3-pytest python3-bytecode python3-typing-extensions
  chromium nodejs
  # The VS Code end-to-end test (vscode-client/scripts/e2e.sh): Debian's rg stands in for the one
  # code-server's install would download; code-server's kerberos module compiles against krb5.
  ripgrep libkrb5-dev
  # The fuzz targets (tests/fuzz/run.sh): clang's libFuzzer and sanitizer runtimes.
  clang libclang-rt-14-dev
  # The Debian unstable root with CPython 3.13-3.15 and debugpy 1.8 (scripts/debian-unstable-root.sh).
  debootstrap
  # The release preset's packages (cmake/Packaging.cmake) and their tests (tests/package/):
  # the man page from --help, the .deb's dependencies (dpkg-shlibdeps), lintian, and `file`.
  help2man dpkg-dev lintian file
  # The tests split stripped interpreters' debug files off with binutils and serve them with
  # Debian's debuginfod server.
  debuginfod binutils
  # The pprof tests decode with protoc and build Go's pprof from the source the build's package
  # installs (golang-go and the packages pprof imports: readline, demangle).
  golang-go golang-github-chzyer-readline-dev golang-github-ianlancetaylor-demangle-dev
)
# The release-arm64 preset (cmake/toolchains/aarch64-linux-gnu.cmake): the cross compiler, the
# arm64 builds of the libraries dapprof links (the header-only and architecture-independent ones,
# asio, nlohmann-json, CLI11, and protoc are the build's own), and qemu-user with binfmt_misc to run
# what it builds; debootstrap makes the arm64 root the emulated tests run in (scripts/arm64-root.sh).
arm64_packages=(
  crossbuild-essential-arm64 qemu-user-static binfmt-support debootstrap
  libfmt-dev:arm64 libspdlog-dev:arm64 libunwind-dev:arm64 libxxhash-dev:arm64 liblzma-dev:arm64
  libdebuginfod-dev:arm64 libprotobuf-dev:arm64 zlib1g-dev:arm64
  libgtest-dev:arm64 libgmock-dev:arm64
)
case "$what" in
  demo) packages=("${build_packages[@]}") ;;
  all) packages=("${build_packages[@]}" "${test_packages[@]}") ;;
  arm64) packages=("${build_packages[@]}" "${arm64_packages[@]}") ;;
  *)
    echo "install-deps.sh: unknown part '$what' (demo, all or arm64)" >&2
    exit 2
    ;;
esac
if ((list)); then
  printf '%s\n' "${packages[@]}"
  exit 0
fi
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
  if [[ $what == arm64 ]] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
    dpkg --add-architecture arm64
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
