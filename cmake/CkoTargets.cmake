# Helpers shared by every layer: compile flags, one static library per layer, tests beside code.

add_library(cko_flags INTERFACE)
target_compile_options(cko_flags INTERFACE -Wall -Wextra -Wpedantic)
if(CKO_WERROR)
  target_compile_options(cko_flags INTERFACE -Werror)
endif()
if(CKO_SANITIZE)
  string(REPLACE "," ";" _cko_sanitizers "${CKO_SANITIZE}")
  foreach(_s IN LISTS _cko_sanitizers)
    target_compile_options(cko_flags INTERFACE -fsanitize=${_s})
    target_link_options(cko_flags INTERFACE -fsanitize=${_s})
  endforeach()
  target_compile_options(cko_flags INTERFACE -fno-omit-frame-pointer -fno-sanitize-recover=all)
  # GCC's flow analysis sees through ASan's instrumentation badly and reports maybe-uninitialized inside
  # libstdc++ (<regex>, <functional>); the Release build of `make test` keeps that warning an error.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(cko_flags INTERFACE -Wno-error=maybe-uninitialized)
  endif()
endif()
# The checkout's path is compiled into the files that need it only (verbs/self_check.cpp, the records
# test, the benches): a define on every compile would make each checkout's objects differ, so that the
# mutation check's scratch copy and each worktree missed ccache for the whole tree.
set(CKO_SOURCE_DIR_DEFINE CKO_SOURCE_DIR="${PROJECT_SOURCE_DIR}")

# cko_layer(<name> SOURCES ... DEPS ...): the static library cko_<name> for src/cko/<name>/.
function(cko_layer name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(cko_${name} STATIC ${ARG_SOURCES})
  target_include_directories(cko_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(cko_${name} PUBLIC cko_flags ${ARG_DEPS})
  if(CKO_COLD_OPT AND name IN_LIST CKO_COLD_LAYERS)
    target_compile_options(cko_${name} PRIVATE ${CKO_COLD_OPT})  # after -O3: it wins
  endif()
endfunction()

# cko_test(<name> SOURCES ... DEPS ...): a GoogleTest binary registered with ctest, linked with
# cko_test_support (tests/support: EXPECT_CKO_ERROR, the scratch directory, whole-file helpers).
# Tests run with the source tree as working directory so that tests/fixtures/ is at hand.
function(cko_test name)
  if(NOT CKO_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  # A test binary's files merge by eights (CKO_UNITY_TESTS), whether or not the libraries do: each
  # file would parse GoogleTest, nlohmann-json and fmt again, and eval_test's 16 files took 3.4
  # times the compile of its two merged ones (119 s against 35 s at -O0). A file-local helper must
  # not share its name with another test file's of the same binary.
  set_target_properties(${name} PROPERTIES UNITY_BUILD ${CKO_UNITY_TESTS} UNITY_BUILD_BATCH_SIZE 8)
  target_link_libraries(${name} PRIVATE cko_flags ${ARG_DEPS} cko_test_support GTest::gtest
                                          GTest::gtest_main)
  gtest_discover_tests(${name} WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} DISCOVERY_TIMEOUT 60)
endfunction()
