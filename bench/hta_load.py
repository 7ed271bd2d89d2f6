#!/usr/bin/env python3
"""The Kineto anchor of bench_kineto: ONE Kineto / PyTorch-profiler trace loaded with Holistic Trace
Analysis (HTA), printing the number of rows of that rank's DataFrame.

    python3 bench/hta_load.py --hta DIR TRACE.json[.gz]   ->  stdout: "hta_events N"

DIR holds HTA's `hta` package (a source copy: HTA is not installable where there is no PyPI). This
is not HTA code. It does what hta.trace_analysis.TraceAnalysis.__init__ does,
minus the analyzers (which pull in plotly):

    t = Trace(trace_files={0: path})      # hta/common/trace.py
    t.load_traces(include_last_profiler_step=False)
        -> parse_traces -> parse_multiple_ranks -> parse_trace_file
           (parse_trace_dataframe [json.loads + DataFrame + _compress_df],
            add_fwd_bwd_links, transform_correlation_to_index, add_iteration)
        -> global symbol-table re-encode -> align_and_filter_trace -> set_index

The shims below fill gaps between files of different HTA versions (a copy put together from
stored files), each applied only when the name is really missing: three are not used while a trace
loads (psutil, a grouping pattern, a dict lookup called once); the fourth is, and can only make
HTA faster: where HTA's normalize_gpu_stream_numbers is the row-by-row DataFrame.apply of its
older versions, it is replaced by the vectorized pd.to_numeric of its later ones (same values: a
stream that is not a number becomes -1), so that the anchor's time is not inflated by code HTA
has since sped up. HTA's log lines (its logging config writes to stdout) go to stderr, so stdout
holds one line.
"""
import logging
import os
import re
import sys
import time
import types


def _install_shims() -> list:
    applied = []
    # 1. psutil: imported at top level by hta/utils/utils.py, used only by
    #    get_mp_pool_size() (multi-rank process pools, >8 ranks). Stub if absent.
    try:
        import psutil  # noqa: F401
    except ImportError:
        stub = types.ModuleType("psutil")

        class _VM:
            available = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")

        stub.virtual_memory = lambda: _VM()
        sys.modules["psutil"] = stub
        applied.append("psutil(stub)")

    # 2. hta.common.types: the stored types.py lacks KERNEL_LAUNCH_CATEGORY_PATTERN,
    #    which the stored trace_symbol_table.py imports (used only by
    #    get_kernel_launch_ids(), never during loading).
    import hta.common.types as hta_types

    if not hasattr(hta_types, "KERNEL_LAUNCH_CATEGORY_PATTERN"):
        hta_types.KERNEL_LAUNCH_CATEGORY_PATTERN = hta_types.GroupingPattern(
            re.compile("(cuda_runtime)|(cuda_driver)|(mtia_runtime)"),
            False,
            "Kernel Launches",
        )
        applied.append("types.KERNEL_LAUNCH_CATEGORY_PATTERN")

    # 3. hta.utils.utils: the stored utils.py lacks get_value_from_dict, which the
    #    stored trace_parser.py imports (called once per trace by infer_gpu_type()
    #    to read metadata "distributedInfo.backend"). Semantics follow HTA's
    #    tests/test_utils_extended.py: dotted key, default when missing.
    import hta.utils.utils as hta_utils

    if not hasattr(hta_utils, "get_value_from_dict"):

        def get_value_from_dict(d, key, default=None):
            cur = d
            for part in key.split("."):
                if not isinstance(cur, dict) or part not in cur:
                    return default
                cur = cur[part]
            return cur

        hta_utils.get_value_from_dict = get_value_from_dict
        applied.append("utils.get_value_from_dict")

    # 4. The row-by-row stream normalization of older versions (DataFrame.apply), vectorized as
    #    later versions do; trace_parser imports it by name, so it is replaced before that import.
    import inspect

    if "apply(" in inspect.getsource(hta_utils.normalize_gpu_stream_numbers):
        import pandas as pd

        def normalize_gpu_stream_numbers(df):
            if "stream" in df.columns:
                df["stream"] = pd.to_numeric(df["stream"], errors="coerce").fillna(-1).astype(int)

        hta_utils.normalize_gpu_stream_numbers = normalize_gpu_stream_numbers
        parser = sys.modules.get("hta.common.trace_parser")
        if parser is not None:
            parser.normalize_gpu_stream_numbers = normalize_gpu_stream_numbers
        applied.append("utils.normalize_gpu_stream_numbers(vectorized)")
    return applied


def _logs_to_stderr() -> None:
    for name in ("hta", ""):
        for h in logging.getLogger(name).handlers:
            if isinstance(h, logging.StreamHandler) and h.stream is sys.stdout:
                h.setStream(sys.stderr)


def main(argv) -> int:
    if len(argv) != 4 or argv[1] != "--hta":
        print("usage: hta_load.py --hta DIR TRACE.json[.gz]", file=sys.stderr)
        return 2
    sys.path.insert(0, os.path.abspath(argv[2]))
    path = os.path.abspath(argv[3])

    t_import = time.perf_counter()
    import hta.configs.config  # noqa: F401  (sets up HTA's logger)

    _logs_to_stderr()
    applied = _install_shims()
    from hta.common.trace import Trace

    t_load = time.perf_counter()
    # == TraceAnalysis(trace_files={0: path}).__init__, without the analyzers
    t = Trace(trace_files={0: path})
    t.load_traces(include_last_profiler_step=False)
    assert t.is_parsed is True
    df = t.get_trace(0)
    t_end = time.perf_counter()

    print(f"hta_events {len(df)}")
    import hta

    print(
        f"hta {hta.__version__} import_s={t_load - t_import:.3f} "
        f"load_s={t_end - t_load:.3f} cols={df.shape[1]} shims={applied or 'none'}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
