# What the binary says it is: the release version (PEP 440, from the nearest v<version> tag, see
# docs/release.md), `git describe`, that tag and the commit of the source tree at configure time.
# CMake re-runs the configure step when HEAD moves (a commit, a checkout), so the numbers follow the
# tree. The values reach the code through one generated file (util/build_info.cpp), so a new commit
# recompiles that file alone, not every file that prints the version.
#
#   tag v0.3.0 at HEAD, clean      -> 0.3.0
#   3 commits after v0.3.0         -> 0.3.0.post3+g1a2b3c4
#   uncommitted changes            -> ...+g1a2b3c4.dirty
#   no v<version> tag              -> <project version>.dev0+g1a2b3c4 (a build before that release)
#   no git                         -> <project version>.dev0+unknown
# A v* tag other than a release version (v1.2.3, v1.2, v1.2.3rc1) is ignored with a warning.
find_package(Git QUIET)
set(CKO_GIT_DESCRIBE "unknown")
set(CKO_GIT_TAG "none")
set(CKO_GIT_COMMIT "unknown")
set(CKO_BUILD_VERSION "${PROJECT_VERSION}.dev0+unknown")
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse HEAD WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    OUTPUT_VARIABLE _commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _rc)
  if(_rc EQUAL 0)
    set(CKO_GIT_COMMIT "${_commit}")
    execute_process(COMMAND ${GIT_EXECUTABLE} describe --tags --always --dirty WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
      OUTPUT_VARIABLE CKO_GIT_DESCRIBE OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --short HEAD WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
      OUTPUT_VARIABLE _short OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    set(_local "g${_short}")
    if(CKO_GIT_DESCRIBE MATCHES "-dirty$")
      string(APPEND _local ".dirty")
    endif()
    set(CKO_BUILD_VERSION "${PROJECT_VERSION}.dev0+${_local}")
    # The nearest tag of HEAD's history that names a release; --long always gives
    # <tag>-<distance>-g<sha>. Each release tag is its own --match (a glob cannot tell v1.2.3 from v1.2-x).
    execute_process(COMMAND ${GIT_EXECUTABLE} tag --merged HEAD --list "v[0-9]*" WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
      OUTPUT_VARIABLE _tags OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    string(REPLACE "\n" ";" _tags "${_tags}")
    set(_match)
    foreach(_tag IN LISTS _tags)
      if(_tag MATCHES "^v[0-9]+(\\.[0-9]+)*((a|b|rc)[0-9]+)?$")
        list(APPEND _match --match "${_tag}")
      else()
        message(WARNING "git tag '${_tag}' is not v<release version> (v1.2.3, v1.2.3rc1); the version ignores it")
      endif()
    endforeach()
    if(_match)
      execute_process(COMMAND ${GIT_EXECUTABLE} describe --tags --long ${_match} WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
        OUTPUT_VARIABLE _release OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _release_rc)
      if(_release_rc EQUAL 0 AND _release MATCHES "^v(.*)-([0-9]+)-g[0-9a-f]+$")
        set(_tag_version "${CMAKE_MATCH_1}")
        set(_distance "${CMAKE_MATCH_2}")
        set(CKO_GIT_TAG "v${_tag_version}")
        if(_distance EQUAL 0 AND NOT CKO_GIT_DESCRIBE MATCHES "-dirty$")
          set(CKO_BUILD_VERSION "${_tag_version}")
        elseif(_distance EQUAL 0)
          set(CKO_BUILD_VERSION "${_tag_version}+${_local}")
        else()
          set(CKO_BUILD_VERSION "${_tag_version}.post${_distance}+${_local}")
        endif()
      endif()
    endif()
    execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --absolute-git-dir WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
      OUTPUT_VARIABLE _git_dir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(EXISTS "${_git_dir}/logs/HEAD")
      set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_git_dir}/logs/HEAD")
    elseif(EXISTS "${_git_dir}/HEAD")
      set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_git_dir}/HEAD")
    endif()
    # A new tag moves no HEAD: watch where tags are kept (shared by every worktree of the clone).
    execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --path-format=absolute --git-common-dir
      WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} OUTPUT_VARIABLE _common_dir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    foreach(_refs "${_common_dir}/refs/tags" "${_common_dir}/packed-refs")
      if(EXISTS "${_refs}")
        set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_refs}")
      endif()
    endforeach()
  endif()
endif()
message(STATUS "cko version ${CKO_BUILD_VERSION} (git ${CKO_GIT_DESCRIBE})")
configure_file(${PROJECT_SOURCE_DIR}/src/cko/util/build_info.cpp.in
               ${PROJECT_BINARY_DIR}/generated/cko/util/build_info.cpp @ONLY)
