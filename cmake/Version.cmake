# cmake -P script, run at every build: writes OUTPUT from INPUT with @DAPPROF_VERSION@ and
# @DAPPROF_COMMIT@, rewriting it only when they changed, so that an unchanged tree rebuilds
# nothing. COMMIT, when given, is the commit; otherwise the checkout's HEAD (12 hex digits, with
# "-dirty" when tracked files differ from it), or "unknown" outside a git checkout.
#   cmake -DSOURCE_DIR=... -DINPUT=... -DOUTPUT=... -DVERSION=... [-DCOMMIT=...] -P Version.cmake
set(DAPPROF_VERSION "${VERSION}")
set(DAPPROF_COMMIT "${COMMIT}")
if(NOT DAPPROF_COMMIT)
  set(DAPPROF_COMMIT unknown)
  find_program(GIT git)
  if(GIT)
    execute_process(COMMAND ${GIT} -C ${SOURCE_DIR} rev-parse --show-toplevel
      OUTPUT_VARIABLE top RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    file(REAL_PATH "${SOURCE_DIR}" source)
    if(rc EQUAL 0)
      file(REAL_PATH "${top}" top)
    endif()
    # Only dapprof's own checkout: a source tarball unpacked inside some other repository is not
    # at that repository's commit.
    if(rc EQUAL 0 AND top STREQUAL source)
      execute_process(COMMAND ${GIT} -C ${SOURCE_DIR} rev-parse --short=12 HEAD
        OUTPUT_VARIABLE head RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      if(rc EQUAL 0)
        set(DAPPROF_COMMIT ${head})
        execute_process(COMMAND ${GIT} -C ${SOURCE_DIR} status --porcelain --untracked-files=no
          OUTPUT_VARIABLE changes RESULT_VARIABLE rc ERROR_QUIET)
        if(rc EQUAL 0 AND NOT changes STREQUAL "")
          string(APPEND DAPPROF_COMMIT -dirty)
        endif()
      endif()
    endif()
  endif()
endif()
configure_file(${INPUT} ${OUTPUT} @ONLY)
