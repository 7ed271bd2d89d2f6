// The SASS tokenizer: line kinds of cuobjdump and nvdisasm output, instructions into counts.
#include "cko/compiler/sass_listing.hpp"

#include "cko/compiler/text_input.hpp"
#include "cko/util/error.hpp"
#include "cko/util/json.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace cko::compiler {
namespace {

bool is_hex(char c) noexcept {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// "/*00c0*/" at the start of a trimmed line: the address column of an instruction.
bool strip_address(std::string_view& s) {
    if (!s.starts_with("/*")) {
        return false;
    }
    const std::size_t close = s.find("*/");
    if (close == std::string_view::npos || close <= 2) {
        return false;
    }
    for (std::size_t i = 2; i < close; ++i) {
        if (!is_hex(s[i])) {
            return false;
        }
    }
    s = trim(s.substr(close + 2));
    return true;
}

bool is_opcode_char(char c) noexcept {
    return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           (c >= 'a' && c <= 'z');
}

// The opcode of an instruction body "[@!P0] OPCODE operands ;" or empty when it is not one.
std::string_view instruction_opcode(std::string_view body) {
    if (body.starts_with("@")) {
        const std::size_t space = body.find_first_of(" \t");
        if (space == std::string_view::npos) {
            return {};
        }
        body = trim(body.substr(space));
    }
    if (body.empty() || !(body.front() >= 'A' && body.front() <= 'Z')) {
        return {};  // ".byte", ".word" data rows of nvdisasm's other sections
    }
    std::size_t end = 0;
    while (end < body.size() && is_opcode_char(body[end])) {
        ++end;
    }
    if (end < body.size() && body[end] != ' ' && body[end] != '\t' && body[end] != ';') {
        return {};
    }
    if (body.find(';') == std::string_view::npos) {
        return {};
    }
    return body.substr(0, end);
}

class SassParser {
public:
    explicit SassParser(std::string_view text) {
        dialect_ = text.find(".section\t.text.") != std::string_view::npos ||
                           text.find(".section .text.") != std::string_view::npos
                       ? SassDialect::nvdisasm
                       : SassDialect::cuobjdump;
        listing_.dialect = dialect_;
    }

    void line(std::string_view raw) {
        const std::string_view s = trim(raw);
        if (s.empty()) {
            return;
        }
        if (s.starts_with("Fatbin ")) {
            in_ptx_ = s.starts_with("Fatbin ptx");
            return;
        }
        if (in_ptx_) {
            return;  // PTX text embedded in a fatbin listing: not SASS
        }
        if (s.starts_with("arch = ")) {
            set_arch(trim(s.substr(7)));
            return;
        }
        if (s.starts_with("code for ")) {
            set_arch(trim(s.substr(9)));
            return;
        }
        if (s.starts_with(".target")) {
            set_arch(trim(s.substr(7)));
            return;
        }
        if (s.starts_with(".headerflags")) {
            // Older nvdisasm listings print no `.target`: the ELF flags are the only statement
            // of the SM. cuobjdump prints them under "code for", which has already said it.
            if (arch_.empty() || (current_ != npos && listing_.kernels[current_].arch.empty())) {
                set_arch(arch_from_header_flags(s));
            }
            return;
        }
        if (dialect_ == SassDialect::cuobjdump && s.starts_with("Function : ")) {
            open_kernel(std::string(trim(s.substr(11))));
            return;
        }
        if (dialect_ == SassDialect::nvdisasm && s.size() > 8 && s.starts_with(".section") &&
            (s[8] == ' ' || s[8] == '\t')) {  // not .sectionflags / .sectioninfo
            section(s);
            return;
        }
        std::string_view body = s;
        if (strip_address(body)) {
            if (body.starts_with("/*") || body.empty()) {
                return;
            }
            const std::string_view opcode = instruction_opcode(body);
            if (!opcode.empty() && current_ != npos) {
                count(opcode);
                return;
            }
            if (!opcode.empty()) {
                unrecognized(s);  // an instruction outside any function
            }
            return;  // data rows (".byte") of nvdisasm's non-text sections
        }
        if (s.starts_with("/* 0x") || s.starts_with("/*0x")) {
            return;  // the second encoding word of cuobjdump's two-line instructions
        }
        if (is_metadata(s)) {
            return;
        }
        unrecognized(s);
    }

    SassListing finish(std::string_view source_name) {
        std::uint64_t total = 0;
        for (const SassKernel& k : listing_.kernels) {
            total += k.instructions;
        }
        if (total == 0) {
            throw Error(
                ErrorCode::unsupported_format,
                fmt::format("{}: no SASS instruction of any kernel found: pass the output of "
                            "`cuobjdump --dump-sass BINARY` or `nvdisasm CUBIN`, or the "
                            "binary itself",
                            source_name),
                Json{{"path", std::string(source_name)},
                     {"unrecognized_lines", listing_.unrecognized_lines}});
        }
        // Kernels without instructions (cuobjdump prints an empty "Function" for some stubs) stay,
        // but listed with zero counts.
        return std::move(listing_);
    }

private:
    static constexpr std::size_t npos = static_cast<std::size_t>(-1);

    void set_arch(std::string_view arch) {
        const std::string a(arch);
        if (!is_sm_arch(a)) {
            return;  // e.g. ".target sm_90a" appears in both dialects; anything else is metadata
        }
        arch_ = a;
        if (std::find(listing_.architectures.begin(), listing_.architectures.end(), a) ==
            listing_.architectures.end()) {
            listing_.architectures.push_back(a);
        }
        if (current_ != npos && listing_.kernels[current_].arch.empty()) {
            listing_.kernels[current_].arch = a;
        }
    }

    void open_kernel(std::string symbol) {
        SassKernel k;
        k.name = demangle(symbol);
        k.symbol = std::move(symbol);
        k.arch = arch_;
        listing_.kernels.push_back(std::move(k));
        current_ = listing_.kernels.size() - 1;
    }

    // nvdisasm: `.section .text.NAME,"ax",@progbits` opens a function; any other section closes it.
    void section(std::string_view s) {
        std::string_view rest = trim(s.substr(8));
        if (rest.starts_with(".text.")) {
            rest.remove_prefix(6);
            const std::size_t comma = rest.find(',');
            open_kernel(std::string(trim(rest.substr(0, comma))));
            return;
        }
        current_ = npos;
    }

    void count(std::string_view opcode) {
        SassKernel& k = listing_.kernels[current_];
        ++k.instructions;
        ++k.mnemonic_counts[std::string(opcode)];
        ++k.opcode_counts[split_opcode(opcode).base];
    }

    static bool is_metadata(std::string_view s) {
        static constexpr std::string_view kPrefixes[] = {
            "code version", "host =",  "compile_size", "identifier", "producer", ".headerflags",
            ".elftype",     "Section", "==",           "..",         ".",        "//",
            "Fatbin",       "_",
        };
        for (std::string_view p : kPrefixes) {
            if (s.starts_with(p)) {
                return true;  // "..." rules, nvdisasm directives, labels (".L_x_0:", "_Z...:")
            }
        }
        return s.back() == ':';  // labels of any other spelling
    }

    void unrecognized(std::string_view s) {
        ++listing_.unrecognized_lines;
        if (listing_.first_unrecognized.size() < 5) {
            listing_.first_unrecognized.push_back(valid_utf8(s.substr(0, 200)));
        }
    }

    SassDialect dialect_;
    SassListing listing_;
    std::string arch_;
    std::size_t current_ = npos;
    bool in_ptx_ = false;
};

}  // namespace

SassOpcode split_opcode(std::string_view opcode) {
    SassOpcode out;
    std::size_t start = 0;
    bool first = true;
    while (start <= opcode.size()) {
        std::size_t dot = opcode.find('.', start);
        if (dot == std::string_view::npos) {
            dot = opcode.size();
        }
        const std::string part(opcode.substr(start, dot - start));
        if (first) {
            out.base = part;
            first = false;
        } else if (!part.empty()) {
            out.modifiers.push_back(part);
        }
        start = dot + 1;
    }
    return out;
}

std::string arch_from_header_flags(std::string_view line) {
    // `.headerflags @"EF_CUDA_TEXMODE_UNIFIED EF_CUDA_64BIT_ADDRESS EF_CUDA_SM80
    // EF_CUDA_VIRTUAL_SM(EF_CUDA_SM80)"`: the first bare EF_CUDA_SM<digits> is the real SM (the
    // one inside VIRTUAL_SM(...) is the PTX target); EF_CUDA_ACCELERATORS marks sm_90a, sm_100a.
    constexpr std::string_view kSm = "EF_CUDA_SM";
    std::string arch;
    bool accelerators = false;
    std::size_t start = 0;
    while (start < line.size()) {
        std::size_t end = line.find_first_of(" \t\"@", start);
        if (end == std::string_view::npos) {
            end = line.size();
        }
        const std::string_view token = line.substr(start, end - start);
        start = end + 1;
        if (token == "EF_CUDA_ACCELERATORS") {
            accelerators = true;
        } else if (arch.empty() && token.size() > kSm.size() && token.starts_with(kSm) &&
                   token.find('(') == std::string_view::npos) {
            arch = "sm_" + std::string(token.substr(kSm.size()));
        }
    }
    if (arch.empty()) {
        return arch;
    }
    if (accelerators && arch.back() >= '0' && arch.back() <= '9') {
        arch += 'a';
    }
    // A flag spelled some other way than sm_ + digits (+ letter) is not an architecture.
    return is_sm_arch(arch) ? arch : std::string();
}

bool is_sm_arch(std::string_view arch) noexcept {
    if (!arch.starts_with("sm_")) {
        return false;
    }
    std::string_view rest = arch.substr(3);
    std::size_t digits = 0;
    while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') {
        ++digits;
    }
    if (digits < 2 || digits > 3) {
        return false;
    }
    rest.remove_prefix(digits);
    return rest.empty() || (rest.size() == 1 && rest[0] >= 'a' && rest[0] <= 'z');
}

SassListing parse_sass_text(std::string_view text, std::string_view source_name) {
    SassParser parser(text);
    for_each_line(text, [&](std::string_view l, std::size_t) { parser.line(l); });
    return parser.finish(source_name);
}

}  // namespace cko::compiler
