# A release's packages, from the static binary (the release preset):
#   - dapprof.1, the man page, made by help2man from the built binary's --help;
#   - dapprof-PLATFORM-VERSION.vsix, the VS Code extension with the stripped binary inside
#     (vscode-client/scripts/package.sh; needs node and npm), PLATFORM being VS Code's name of the
#     build's architecture: linux-x64, or linux-arm64 (the release-arm64 preset, cross-compiled);
#   - the .deb (`--target package`): /usr/bin/dapprof, the man page, the README and protocol
#     reference, the .vsix in /usr/share/dapprof/, packaging/copyright and packaging/changelog.
# docs/PACKAGING.md says how they are made and tested.
if(NOT DAPPROF_STATIC)
  message(WARNING "DAPPROF_PACKAGE without DAPPROF_STATIC: the packages need this machine's shared libraries")
endif()
find_package(Python3 REQUIRED COMPONENTS Interpreter)
find_program(HELP2MAN help2man REQUIRED)
find_program(GZIP gzip REQUIRED)
# vscode-client/scripts/package.sh runs them.
find_program(NODE node REQUIRED)
find_program(NPM npm REQUIRED)
# VS Code's platform and Debian's architecture of the machine the binary is built for.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
  set(DAPPROF_VSCODE_PLATFORM linux-arm64)
  set(DAPPROF_DEB_ARCHITECTURE arm64)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  set(DAPPROF_VSCODE_PLATFORM linux-x64)
  set(DAPPROF_DEB_ARCHITECTURE amd64)
else()
  message(FATAL_ERROR "DAPPROF_PACKAGE: no VS Code platform for ${CMAKE_SYSTEM_PROCESSOR} "
                      "(x86_64 and aarch64 are packaged)")
endif()
set(DAPPROF_VSIX ${CMAKE_BINARY_DIR}/dapprof-${DAPPROF_VSCODE_PLATFORM}-${PROJECT_VERSION}.vsix)
set(DAPPROF_SHIPPED ${CMAKE_BINARY_DIR}/shipped/dapprof)

# help2man and man_include.py run the built dapprof. A cross build's runs under the toolchain's
# emulator (qemu-user), through a wrapper of the same name, as help2man names the page after it.
set(DAPPROF_RUNNABLE $<TARGET_FILE:dapprof>)
if(CMAKE_CROSSCOMPILING)
  if(NOT CMAKE_CROSSCOMPILING_EMULATOR)
    message(FATAL_ERROR "DAPPROF_PACKAGE in a cross build needs CMAKE_CROSSCOMPILING_EMULATOR "
                        "to run dapprof for its man page (see cmake/toolchains/)")
  endif()
  list(JOIN CMAKE_CROSSCOMPILING_EMULATOR " " emulator)
  set(DAPPROF_RUNNABLE ${CMAKE_BINARY_DIR}/emulated/dapprof)
  file(GENERATE OUTPUT ${DAPPROF_RUNNABLE}
    CONTENT "#!/bin/sh\nexec ${emulator} $<TARGET_FILE:dapprof> \"$@\"\n"
    FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ
                     WORLD_EXECUTE)
endif()

# help2man reads the top-level --help; packaging/man_include.py adds each subcommand's. gzip -n:
# no name or time stamp in the header, so the same page gives the same bytes.
add_custom_command(
  OUTPUT dapprof.1.gz
  COMMAND Python3::Interpreter ${PROJECT_SOURCE_DIR}/packaging/man_include.py
          ${DAPPROF_RUNNABLE} dapprof.h2m
  COMMAND ${HELP2MAN} --no-info --section=1 --include=dapprof.h2m --output=dapprof.1
          ${DAPPROF_RUNNABLE}
  COMMAND ${GZIP} -9nf dapprof.1
  DEPENDS dapprof ${PROJECT_SOURCE_DIR}/packaging/man_include.py
  COMMENT "Making the man page dapprof.1 from dapprof --help"
  VERBATIM)

# The dapprof both packages ship, stripped as Debian's dh_strip strips a program.
add_custom_command(
  OUTPUT ${DAPPROF_SHIPPED}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/shipped
  COMMAND ${CMAKE_STRIP} --remove-section=.comment --remove-section=.note -o ${DAPPROF_SHIPPED}
          $<TARGET_FILE:dapprof>
  DEPENDS dapprof
  VERBATIM)

file(GLOB_RECURSE DAPPROF_EXTENSION_SOURCES CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/vscode-client/src/* ${PROJECT_SOURCE_DIR}/vscode-client/media/*)
add_custom_command(
  OUTPUT ${DAPPROF_VSIX}
  COMMAND ${PROJECT_SOURCE_DIR}/vscode-client/scripts/package.sh --binary ${DAPPROF_SHIPPED}
          --target ${DAPPROF_VSCODE_PLATFORM} --notices ${PROJECT_SOURCE_DIR}/packaging/copyright
          --output ${DAPPROF_VSIX}
  DEPENDS ${DAPPROF_SHIPPED} ${DAPPROF_EXTENSION_SOURCES} ${PROJECT_SOURCE_DIR}/packaging/copyright
          ${PROJECT_SOURCE_DIR}/vscode-client/package.json
          ${PROJECT_SOURCE_DIR}/vscode-client/package-lock.json
          ${PROJECT_SOURCE_DIR}/vscode-client/README.md
          ${PROJECT_SOURCE_DIR}/vscode-client/.vscodeignore
          ${PROJECT_SOURCE_DIR}/vscode-client/scripts/build.mjs
          ${PROJECT_SOURCE_DIR}/vscode-client/scripts/package.sh
  COMMENT "Packaging the VS Code extension for ${DAPPROF_VSCODE_PLATFORM} with dapprof inside"
  VERBATIM)

add_custom_command(
  OUTPUT changelog.gz
  COMMAND ${CMAKE_COMMAND} -E copy ${PROJECT_SOURCE_DIR}/packaging/changelog changelog
  COMMAND ${GZIP} -9nf changelog
  DEPENDS ${PROJECT_SOURCE_DIR}/packaging/changelog
  VERBATIM)
add_custom_target(dapprof_packages ALL DEPENDS dapprof.1.gz ${DAPPROF_VSIX} changelog.gz)

install(PROGRAMS ${DAPPROF_SHIPPED} DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/dapprof.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${DAPPROF_VSIX} DESTINATION ${CMAKE_INSTALL_DATADIR}/dapprof
  RENAME dapprof-${DAPPROF_VSCODE_PLATFORM}.vsix)
install(FILES packaging/copyright ${CMAKE_CURRENT_BINARY_DIR}/changelog.gz
  DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES packaging/lintian-overrides DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides
  RENAME dapprof)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME dapprof)
set(CPACK_PACKAGE_VENDOR "the dapprof authors")
set(CPACK_PACKAGE_CONTACT "dapprof maintainers <maintainers@users.noreply.a-seed-b7f5f76d.example>"
  CACHE STRING "The .deb's Maintainer")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "live profiler for Python programs debugged in VS Code")
set(CPACK_PACKAGE_DESCRIPTION [[dapprof sits between VS Code and debugpy as a Debug Adapter Protocol proxy:
debugging works as before, and a profiling extension of the protocol streams
samples of the running program, read from outside the process as py-spy
does. `dapprof record` and `dapprof dump` sample any CPython 3.7 to 3.15
process from the command line.

The VS Code extension, with this dapprof inside, is in /usr/share/dapprof/.]])
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# The binary's, not this machine's (`dpkg --print-architecture`, CPack's default): they differ in
# a cross build.
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE ${DAPPROF_DEB_ARCHITECTURE})
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Depends: from dpkg-shlibdeps, which finds glibc only.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# `dapprof stdio` and `serve` run `python3 -m debugpy.adapter`; record and dump need neither.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3, python3-debugpy")
# Names stripped native frames from debuginfod servers (DEBUGINFOD_URLS) when installed; loaded at
# run time, so the binary runs without it.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libdebuginfod1")
# Debian 12's dpkg reads xz; zstd only from Debian 13 on.
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR}/packages)
include(CPack)
