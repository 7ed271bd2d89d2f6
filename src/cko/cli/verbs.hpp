// Registration of every verb group; each lives in its own *_cmd.cpp and is called from cli.cpp.
#pragma once

#include <CLI/CLI.hpp>

namespace cko::cli {

void register_self_check(CLI::App& app);
void register_store(CLI::App& app);   // store_cmd.cpp: ls, show, fsck, status, wait, cancel
void register_driver(CLI::App& app);  // driver_cmd.cpp: driver run
void register_target(CLI::App& app);  // target_cmd.cpp: init, target freeze, baseline, experiment, screen/confirm/audit, champion
void register_doctor(CLI::App& app);  // doctor_cmd.cpp: doctor
void register_report(CLI::App& app);  // report_cmd.cpp: report, handoff, stop
void register_profile(CLI::App& profile);
void register_profile_ncu(CLI::App& profile);     // profile_ncu_cmd.cpp
void register_profile_traces(CLI::App& profile);  // profile_trace_cmd.cpp
void register_compiler(CLI::App& app);   // compiler_cmd.cpp: ptxas, sass, sass diff, triton
void register_knowledge(CLI::App& app);  // knowledge_cmd.cpp: knowledge query
void register_map(CLI::App& app);        // map_cmd.cpp: map

}  // namespace cko::cli
