// The statistics layer in one include: paired estimates, verdicts, sequential looks, resolution.
#pragma once

#include "cko/stats/descriptive.hpp"
#include "cko/stats/paired_estimate.hpp"
#include "cko/stats/resolution.hpp"
#include "cko/stats/sequential.hpp"
#include "cko/stats/verdict.hpp"
