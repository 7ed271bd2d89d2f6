# The unity build (-DCKO_UNITY_BUILD=ON: `make demo`, `make static`, `make portable`, and the libraries
# of `make sanitize`/`make fuzz`; test binaries merge their own files whatever this says,
# CKO_UNITY_TESTS in cmake/CkoTargets.cmake): each layer library compiles as a few merged
# translation units, so the heavy headers (nlohmann-json, fmt, CLI11, toml++) are parsed and their
# templates compiled a few times instead of once per file: cko builds in well under half the CPU
# time. Files whose file-local helpers share a name with another file's of the same library are
# compiled on their own (cko_unity_skip below). CI's `make static` builds the same libraries unity,
# where a new clash is an error (a user's `make demo` falls back to the file-by-file build).
function(cko_unity_skip target)
  get_target_property(_dir ${target} SOURCE_DIR)
  list(TRANSFORM ARGN PREPEND "${_dir}/")
  set_source_files_properties(${ARGN} TARGET_DIRECTORY ${target}
    PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
endfunction()

if(CKO_UNITY_BUILD)
  cko_unity_skip(cko_eval experiment.cpp)
  cko_unity_skip(cko_timeline map_text.cpp)
  cko_unity_skip(cko_profile_nsys timeline_feeder.cpp)
  cko_unity_skip(cko_report handoff.cpp)
endif()
