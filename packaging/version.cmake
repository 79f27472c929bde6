# GRUWB_VERSION: the version `gruwb --version`, Help > About and the Debian package show.
#   at the tag v<PROJECT_VERSION>  ->  0.1.0                      (a release)
#   any other commit               ->  0.1.0+git<commits>.<hash>  (a development build; .dirty
#                                      when tracked files differ from the commit)
#   no git (a source tarball)      ->  0.1.0
# -DGRUWB_VERSION=... overrides it (a distribution's own version). Debian orders
# 0.1.0 < 0.1.0+git..., and a later commit count sorts after an earlier one. Computed at configure time; a new commit or checkout re-runs
# CMake (CMAKE_CONFIGURE_DEPENDS on the HEAD reflog), an edit alone does not.
# GRUWB_RELEASE_DATE (yyyy-mm-dd, the man pages and AppStream release): the commit's date, else
# today (SOURCE_DATE_EPOCH when set).
string(TIMESTAMP GRUWB_RELEASE_DATE "%Y-%m-%d" UTC)
set(version_given ${GRUWB_VERSION})
if(NOT version_given)
  set(GRUWB_VERSION ${PROJECT_VERSION})
endif()
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS ${PROJECT_SOURCE_DIR}/.git)
  macro(gruwb_git out)
    execute_process(COMMAND ${GIT_EXECUTABLE} ${ARGN} WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                    OUTPUT_VARIABLE ${out} RESULT_VARIABLE git_result
                    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  endmacro()
  gruwb_git(date log -1 --format=%cs HEAD)
  if(git_result EQUAL 0)
    set(GRUWB_RELEASE_DATE ${date})
  endif()
  gruwb_git(tag describe --tags --exact-match --match v${PROJECT_VERSION} HEAD)
  if(NOT git_result EQUAL 0 AND NOT version_given)
    gruwb_git(count rev-list --count HEAD)
    gruwb_git(hash rev-parse --short=7 HEAD)
    if(git_result EQUAL 0)
      set(GRUWB_VERSION ${PROJECT_VERSION}+git${count}.${hash})
      gruwb_git(ignored diff-index --quiet HEAD --)
      if(NOT git_result EQUAL 0)
        string(APPEND GRUWB_VERSION .dirty)
      endif()
    endif()
  endif()
  # Re-run CMake when HEAD moves: the reflog gets a line for every commit, checkout and reset
  # (worktrees have their own); HEAD itself when there is no reflog.
  gruwb_git(watched rev-parse --path-format=absolute --git-path logs/HEAD)
  if(NOT EXISTS "${watched}")
    gruwb_git(watched rev-parse --path-format=absolute --git-path HEAD)
  endif()
  if(EXISTS "${watched}")
    set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${watched})
  endif()
endif()
message(STATUS "GRU Workbench version ${GRUWB_VERSION}")
