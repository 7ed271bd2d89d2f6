"""cko_driver: a pure-stdlib helper for writing cko drivers (cko/driver-request-v1 -> cko/driver-result-v2, or v1 when the request names no digests).

    from cko_driver import Workload, run_driver

    class Saxpy(Workload):
        def prepare(self, subject, request): ...   # load subject code from subject.path
        def run(self, state): ...                  # the timed call
        def check(self, state): return {"max_rel_err": 0.0}

    raise SystemExit(run_driver(Saxpy()))
"""
from .request import REQUEST_FORMAT, Case, Metric, Profile, Request, RequestError, Subject, load_request, parse_request
from .result import RESULT_FORMAT, RESULT_FORMAT_V2, write_result_atomically
from .runner import EXIT_BAD_REQUEST, EXIT_DRIVER_FAILED, EXIT_OK, DriverFailure, Workload, run_driver, serve
from .timing import NS_PER_UNIT, CpuTimer, CudaEventTimer, ns_to_unit

__all__ = [
    "REQUEST_FORMAT", "RESULT_FORMAT", "RESULT_FORMAT_V2", "Case", "Metric", "Profile", "Request", "RequestError", "Subject", "load_request",
    "parse_request", "write_result_atomically", "EXIT_OK", "EXIT_BAD_REQUEST", "EXIT_DRIVER_FAILED",
    "DriverFailure", "Workload", "run_driver", "serve", "NS_PER_UNIT", "CpuTimer", "CudaEventTimer", "ns_to_unit",
]
