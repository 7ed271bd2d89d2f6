// Feeds an Nsight Systems export's intervals into the one timeline model.
#pragma once

#include "cko/profile/nsys/nsys_database.hpp"
#include "cko/timeline/timeline.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace cko::profile::nsys {

struct NsysTimelineFeed {
    std::int64_t intervals = 0;
    std::vector<std::string> notes;
};

// One source per export. GPU lanes (deviceId, streamId): CUPTI_ACTIVITY_KIND_KERNEL (named by
// demangledName, NCCL kernels as communication), ..._MEMCPY (copyKind 1 H2D, 2 D2H, 8 D2D,
// 10 P2P, others memcpy_other), ..._MEMSET. CPU lanes (pid, tid from globalTid): ..._RUNTIME
// (names without their _vNNNN suffix; cu* calls not starting with cuda are driver calls; sync
// split out by name) and NVTX_EVENTS push/pop and start/end ranges (59, 60, 70, 71) as
// annotations. An absent table contributes nothing; a present one missing a column fails
// (missing_field), as the stats reports do. Open NVTX ranges (no end) are left out and noted.
NsysTimelineFeed feed_nsys_timeline(const NsysDatabase& db, timeline::TimelineSink& sink);

}  // namespace cko::profile::nsys
