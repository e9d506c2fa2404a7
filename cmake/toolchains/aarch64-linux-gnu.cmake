# linux-arm64 (aarch64) from an x86-64 Debian 12: Debian's cross compiler
# (crossbuild-essential-arm64) and the multiarch :arm64 -dev packages, which install beside the
# amd64 ones (scripts/install-deps.sh arm64). What the build runs (tests, help2man) runs under
# qemu-user with the arm64 C library of the cross toolchain.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# The arm64 libraries and their CMake packages are in /usr/lib/aarch64-linux-gnu; headers in
# /usr/include are shared by every architecture (multiarch), and so are architecture-independent
# packages (asio, nlohmann-json, CLI11). Programs (protoc) are the build machine's.
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
# Debian 12 has no aarch64-linux-gnu-pkg-config: the host's pkg-config, told where the arm64 .pc
# files are.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
# Enough for what the build runs (help2man: --help and --version, no threads). A program that starts
# a thread needs Debian's own libc6:arm64 instead (the arm64 root's: scripts/arm64-root.sh): with
# the cross toolchain's libc (libc6-arm64-cross 2.36-8cross1) the first pthread_create never
# returns under Debian 12's qemu-user 7.2 (docs/PACKAGING.md).
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static -L /usr/aarch64-linux-gnu)
