# What `cmake --install` puts in place, for any build: the executable and its documentation.
# A packaging build (DAPPROF_PACKAGE, cmake/Packaging.cmake) adds the man page, the .vsix and the
# Debian files.
include(GNUInstallDirs)
if(NOT DAPPROF_PACKAGE)  # which installs the stripped copy the packages ship
  install(TARGETS dapprof)
endif()
install(FILES README.md docs/PROFILING.md docs/SECURITY.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
