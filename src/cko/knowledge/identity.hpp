// Who is asking: GPU architecture, compute capability, CUDA, driver and framework versions.
#pragma once

#include "cko/util/closed_enum.hpp"
#include "cko/util/json.hpp"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cko::knowledge {

// Architecture families, each a compute-capability range (see family_range): never a list of SMs.
#define CKO_ARCH_FAMILIES(X) \
    X(volta) X(turing) X(ampere) X(ada) X(hopper) X(blackwell) X(blackwell_consumer)
CKO_CLOSED_ENUM(ArchFamily, CKO_ARCH_FAMILIES, arch_family_name, arch_family_from_name)
#undef CKO_ARCH_FAMILIES

// A dotted numeric version ("13.0", "2.11.0+cu130" -> 2.11.0); ordering pads with zeros.
struct Version {
    std::vector<int> parts;
    std::string spelled;  // the numeric core as parsed ("580.159.04"); text() prints it

    [[nodiscard]] static std::optional<Version> parse(std::string_view text);
    [[nodiscard]] std::string text() const;
    friend auto operator<=>(const Version& a, const Version& b) noexcept -> std::strong_ordering;
    friend bool operator==(const Version& a, const Version& b) noexcept { return (a <=> b) == 0; }
};

struct ComputeCapability {
    int major = 0;
    int minor = 0;
    [[nodiscard]] Version version() const {
        Version v;
        v.parts = {major, minor};
        return v;
    }
    [[nodiscard]] std::string text() const;
};

// The family whose range holds `cc`, if any: volta 7.0–7.2, turing 7.5, ampere 8.0–8.7, ada 8.9,
// hopper 9.x, blackwell 10.x–11.x (data centre, Thor), blackwell_consumer 12.x.
[[nodiscard]] std::optional<ArchFamily> family_of(const ComputeCapability& cc) noexcept;

struct Identity {
    std::string arch;  // "sm_90a" as given (suffix kept), or derived "sm_90"
    std::optional<ComputeCapability> cc;
    std::optional<Version> cuda;                // the CUDA toolkit / runtime
    std::optional<Version> driver;              // the NVIDIA driver
    std::map<std::string, Version> frameworks;  // torch, triton, vllm, ... (canonical names)
    std::string source;                         // "flags", "doctor:<file>", or both

    [[nodiscard]] Json to_json() const;
};

// "sm_90a" / "sm_120" / "compute_90" -> 9.0 / 12.0 / 9.0; nullopt when it is not that shape.
[[nodiscard]] std::optional<ComputeCapability> cc_from_arch(std::string_view arch) noexcept;
// "9.0" -> 9.0
[[nodiscard]] std::optional<ComputeCapability> parse_cc(std::string_view text) noexcept;

// The one spelling of a framework name: "pytorch" and "torch" are both torch,
// "tensorrt-llm" is tensorrt_llm. Lower-case, '-' as '_'.
[[nodiscard]] std::string canonical_framework(std::string_view name);

// The identity a `cko doctor --json` document describes: compute capability of its GPUs (they
// must agree), nvcc's version as CUDA, the driver version. Throws invalid_argument naming the
// field when the document is not a doctor document or its GPUs differ.
[[nodiscard]] Identity identity_from_doctor(const Json& doctor, std::string_view file);

}  // namespace cko::knowledge
