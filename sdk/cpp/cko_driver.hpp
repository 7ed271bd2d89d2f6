// cko_driver.hpp: header-only C++17 helper for cko drivers (cko/driver-request-v1 ->
// cko/driver-result-v2, or v1 when the request names no digests).
//
//   #include "cko_driver.hpp"
//   struct Run : cko_driver::SubjectRun { void run() override {...}  cko_driver::Check check()
//   override {...} }; struct W : cko_driver::Workload {
//     std::unique_ptr<cko_driver::SubjectRun> prepare(const cko_driver::Subject& s, const
//     cko_driver::Request& r)
//         override { return std::make_unique<Run>(...); }
//   };
//   int main(int argc, char** argv) { W w; return cko_driver::run_driver(argc, argv, w); }
//
// Standard library only (plus POSIX). Under nvcc (or with -DCKO_DRIVER_WITH_CUDA and the CUDA
// runtime) Options::timer = TimerKind::cuda_events times with CUDA events and Options::flush_l2
// clears L2.
#pragma once

#include "cko_driver/environment.hpp"
#include "cko_driver/json.hpp"
#include "cko_driver/request.hpp"
#include "cko_driver/runner.hpp"
#include "cko_driver/shared_library.hpp"
#include "cko_driver/timer.hpp"
