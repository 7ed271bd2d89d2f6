// probe_identity: host facts, the GPU reader's view, tool versions and the counter permission.
#include "cko/env/identity.hpp"

#include "cko/env/gpu_reader.hpp"

#include <future>

namespace cko::env {

Json Identity::to_json() const {
    const auto str = [](const std::string& s) { return s.empty() ? Json(nullptr) : Json(s); };
    Json gpu_list = Json::array();
    for (const auto& gpu : gpus) {
        gpu_list.push_back(gpu.to_json());
    }
    Json links = Json::array();
    for (const auto& link : gpu_topology) {
        links.push_back(link.to_json());
    }
    Json tool_list = Json::array();
    for (const auto& t : tools) {
        tool_list.push_back(t.to_json());
    }
    return Json{{"format_version", kIdentityFormat},
                {"host", host.to_json()},
                {"gpu_source", gpu_source},
                {"gpus", gpu_list},
                {"gpu_topology", links},
                {"driver_version", str(driver_version)},
                {"cuda_driver_version", str(cuda_driver_version)},
                {"tools", tool_list},
                {"ncu_counters_permitted",
                 ncu_counters_permitted ? Json(*ncu_counters_permitted) : Json(nullptr)},
                {"ncu_counters_detail", ncu_counters_detail},
                {"notes", notes}};
}

const Tool* Identity::tool(std::string_view name) const {
    for (const auto& t : tools) {
        if (t.name == name) {
            return &t;
        }
    }
    return nullptr;
}

Identity probe_identity(const ProbeOptions& options) {
    Identity identity;
    // Tool versions take the longest (seconds for ncu/nsys); they run while the GPUs are read.
    std::future<std::vector<Tool>> tools;
    if (options.tools) {
        tools = std::async(std::launch::async, probe_tools, default_tool_names(),
                           tool_search_dirs(), options.tool_timeout);
    }
    identity.host = probe_host();
    GpuReaderOptions reader_options;
    reader_options.nvml = options.nvml;
    reader_options.nvidia_smi = options.nvidia_smi;
    reader_options.nvidia_smi_timeout = options.nvidia_smi_timeout;
    if (auto reader = open_gpu_reader(reader_options, identity.notes)) {
        identity.gpu_source = std::string(reader->source());
        GpuReading reading = reader->read(GpuDetail::full);
        identity.gpus = std::move(reading.gpus);
        identity.gpu_topology = std::move(reading.links);
        identity.notes.insert(identity.notes.end(), reading.notes.begin(), reading.notes.end());
    }
    if (!identity.gpus.empty()) {
        identity.driver_version = identity.gpus.front().driver_version;
        identity.cuda_driver_version = identity.gpus.front().cuda_driver_version;
    }
    if (tools.valid()) {
        identity.tools = tools.get();
    }
    const CounterPermission permission = probe_ncu_counter_permission();
    identity.ncu_counters_permitted = permission.permitted;
    identity.ncu_counters_detail = permission.detail;
    return identity;
}

}  // namespace cko::env
