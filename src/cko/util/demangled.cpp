// The parameter list is found from the end: "(anonymous namespace)" and "(int)3" come before it.
#include "cko/util/demangled.hpp"

namespace cko {

std::string_view without_parameter_list(std::string_view demangled) {
    std::string_view s = demangled;
    while (!s.empty() && s.back() == ' ') {
        s.remove_suffix(1);
    }
    if (s.empty() || s.back() != ')') {
        return demangled;
    }
    int depth = 0;
    for (std::size_t i = s.size(); i-- > 0;) {
        if (s[i] == ')') {
            ++depth;
        } else if (s[i] == '(' && --depth == 0) {
            std::string_view name = s.substr(0, i);
            while (!name.empty() && name.back() == ' ') {
                name.remove_suffix(1);
            }
            return name.empty() ? demangled : name;
        }
    }
    return demangled;  // unbalanced: not a name this understands
}

}  // namespace cko
