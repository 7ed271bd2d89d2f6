# Finds every third-party dependency (Debian packages only) and exposes one imported
# target per dependency, cko::<name>, so that layer CMakeLists never care whether the
# build is static or shared.
find_package(PkgConfig REQUIRED)

# nlohmann-json and CLI11: header-only.
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 2.1 REQUIRED)
add_library(cko::json ALIAS nlohmann_json::nlohmann_json)
add_library(cko::cli11 ALIAS CLI11::CLI11)

# fmt: Debian ships only libfmt.so, so the static build uses its header-only mode.
find_package(fmt 9 REQUIRED)
if(CKO_STATIC)
  add_library(cko::fmt ALIAS fmt::fmt-header-only)
else()
  add_library(cko::fmt ALIAS fmt::fmt)
endif()

# toml++: header-only use (TOML_HEADER_ONLY=1), the same for both builds.
pkg_check_modules(TOMLPP REQUIRED IMPORTED_TARGET tomlplusplus)
add_library(cko_tomlpp INTERFACE)
target_include_directories(cko_tomlpp INTERFACE ${TOMLPP_INCLUDE_DIRS})
target_compile_definitions(cko_tomlpp INTERFACE TOML_HEADER_ONLY=1)
add_library(cko::tomlpp ALIAS cko_tomlpp)

# simdjson: shared library from Debian, or compiled from its source for the static build.
if(CKO_STATIC)
  if(NOT EXISTS "${CKO_SIMDJSON_SOURCE}/singleheader/simdjson.cpp")
    message(FATAL_ERROR "CKO_STATIC needs CKO_SIMDJSON_SOURCE pointing at a simdjson source tree "
                        "(run 'make static', which unpacks Debian's simdjson source package)")
  endif()
  add_library(cko_simdjson STATIC "${CKO_SIMDJSON_SOURCE}/singleheader/simdjson.cpp")
  target_include_directories(cko_simdjson SYSTEM PUBLIC "${CKO_SIMDJSON_SOURCE}/singleheader")
  add_library(cko::simdjson ALIAS cko_simdjson)
else()
  find_package(simdjson 3 REQUIRED)
  add_library(cko::simdjson ALIAS simdjson::simdjson)
endif()

if(CKO_STATIC)
  set(OPENSSL_USE_STATIC_LIBS TRUE)
  set(ZLIB_USE_STATIC_LIBS ON)
  set(CMAKE_FIND_LIBRARY_SUFFIXES .a)
endif()
find_package(OpenSSL 3 REQUIRED COMPONENTS Crypto)
find_package(ZLIB REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(Threads REQUIRED)
add_library(cko::crypto ALIAS OpenSSL::Crypto)
add_library(cko::zlib ALIAS ZLIB::ZLIB)
add_library(cko_sqlite3 INTERFACE)
target_link_libraries(cko_sqlite3 INTERFACE SQLite::SQLite3 Threads::Threads ${CMAKE_DL_LIBS})
if(CKO_STATIC)
  target_link_libraries(cko_sqlite3 INTERFACE m)
endif()
add_library(cko::sqlite3 ALIAS cko_sqlite3)

# zstd (bundles, `cko bundle`): Debian's libzstd-dev ships the shared library and libzstd.a, each
# an imported target of its CMake package.
find_package(zstd 1.4 REQUIRED CONFIG)
if(CKO_STATIC)
  add_library(cko::zstd ALIAS zstd::libzstd_static)
else()
  add_library(cko::zstd ALIAS zstd::libzstd_shared)
endif()
