// Parameter lists are cut from the end; parentheses inside the name stay.
#include "cko/util/demangled.hpp"

#include <gtest/gtest.h>

namespace cko {
namespace {

TEST(Demangled, CutsTheParameterListOnly) {
    EXPECT_EQ(without_parameter_list("softmax_rows_naive(const float *, float *, int, int)"),
              "softmax_rows_naive");
    // cuobjdump and NCU print kernels of an anonymous namespace this way: the name starts with '('.
    EXPECT_EQ(without_parameter_list("(anonymous namespace)::softmax_rows_fused(float const*, "
                                     "float*, int)"),
              "(anonymous namespace)::softmax_rows_fused");
    EXPECT_EQ(without_parameter_list("void (anonymous namespace)::softmax_warp_forward<float, 11>("
                                     "float*, float const*, int)"),
              "void (anonymous namespace)::softmax_warp_forward<float, 11>");
    EXPECT_EQ(without_parameter_list("void k<(int)3>(int (*)(float))"), "void k<(int)3>");
    EXPECT_EQ(without_parameter_list("plain_name"), "plain_name");
    EXPECT_EQ(without_parameter_list("broken)"), "broken)");
    EXPECT_EQ(without_parameter_list("(x)"), "(x)");
}

}  // namespace
}  // namespace cko
