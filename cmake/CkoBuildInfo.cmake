# What `cko self-check` reports about the build: `git describe`, the nearest tag and the commit of
# the source tree at configure time. CMake re-runs the configure step when HEAD moves (a commit,
# a checkout), so the numbers follow the tree; a tree without git reports "unknown".
find_package(Git QUIET)
set(CKO_GIT_DESCRIBE "unknown")
set(CKO_GIT_TAG "none")
set(CKO_GIT_COMMIT "unknown")
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse HEAD WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    OUTPUT_VARIABLE _commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _rc)
  if(_rc EQUAL 0)
    set(CKO_GIT_COMMIT "${_commit}")
    execute_process(COMMAND ${GIT_EXECUTABLE} describe --tags --always --dirty WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
      OUTPUT_VARIABLE CKO_GIT_DESCRIBE OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    execute_process(COMMAND ${GIT_EXECUTABLE} describe --tags --abbrev=0 WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
      OUTPUT_VARIABLE _tag OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _tag_rc)
    if(_tag_rc EQUAL 0)
      set(CKO_GIT_TAG "${_tag}")
    endif()
    execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --absolute-git-dir WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
      OUTPUT_VARIABLE _git_dir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(EXISTS "${_git_dir}/logs/HEAD")
      set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_git_dir}/logs/HEAD")
    elseif(EXISTS "${_git_dir}/HEAD")
      set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_git_dir}/HEAD")
    endif()
  endif()
endif()
configure_file(${PROJECT_SOURCE_DIR}/src/cko/verbs/build_info.hpp.in ${PROJECT_BINARY_DIR}/generated/cko/build_info.hpp @ONLY)
