// Demangled C++ function names as profilers and disassemblers print them.
#pragma once

#include <string_view>

namespace cko {

// The name without its parameter list: "(anonymous namespace)::k(float const*, int)" gives
// "(anonymous namespace)::k", "void f<(int)3>(int)" gives "void f<(int)3>". The list is the
// parenthesis that closes the name, matched backwards, so parentheses inside the name (an
// anonymous namespace, a template argument) stay. A name that does not end in ')' is returned as
// it is.
[[nodiscard]] std::string_view without_parameter_list(std::string_view demangled);

}  // namespace cko
