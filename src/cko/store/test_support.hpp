// The scratch directory of the store, run, eval and report tests: cko::test::ScratchTest
// (tests/support/cko_test_support.hpp), under the name those tests knew it by.
#pragma once

#include "cko/util/files.hpp"
#include "cko_test_support.hpp"

// What the tests had from here before.
#include <sys/stat.h>
#include <unistd.h>
#include <fstream>

namespace cko::store::testing {

using ScratchTest = cko::test::ScratchTest;

inline void make_writable_and_remove(const std::filesystem::path& p) {
    remove_tree_forcibly(p);
}

}  // namespace cko::store::testing
