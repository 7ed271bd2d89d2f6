// GPU reader over `nvidia-smi --query-gpu=... --format=csv,noheader,nounits`: the fallback when
// NVML cannot be loaded (static binary, odd library layout). Slower: one or two processes a read.
#pragma once

#include "cko/env/gpu_reader.hpp"

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace cko::env {

// $CKO_NVIDIA_SMI when set (an absolute path; tests point it at nothing), else nvidia-smi from
// tool_search_dirs(). Empty when not found.
[[nodiscard]] std::string nvidia_smi_path();

// Runs one query to see that nvidia-smi answers and lists at least one GPU; nullptr with
// `why_not` otherwise.
[[nodiscard]] std::unique_ptr<GpuReader> open_smi_reader(std::chrono::milliseconds timeout,
                                                         std::string& why_not);

// The --query-gpu fields for each detail level, in order.
[[nodiscard]] std::vector<std::string> smi_gpu_fields(GpuDetail detail, bool with_compute_cap);

// Pure parsers, for tests. One CSV row per GPU in `fields` order; "[N/A]", "[Not Supported]" and
// empty cells leave the field absent; malformed rows become notes.
[[nodiscard]] std::vector<GpuInfo> parse_smi_gpus(std::string_view csv,
                                                  const std::vector<std::string>& fields,
                                                  std::vector<std::string>& notes);
// Rows of --query-compute-apps=gpu_uuid,pid,used_memory (MiB), attached to the GPU by UUID.
void attach_smi_processes(std::string_view csv, std::vector<GpuInfo>& gpus,
                          std::vector<std::string>& notes);

}  // namespace cko::env
