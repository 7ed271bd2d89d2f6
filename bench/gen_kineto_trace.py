#!/usr/bin/env python3
"""Writes a synthetic PyTorch-profiler (Kineto) Chrome trace of a requested size for benchmarks.

The events copy the shapes torch 2.11 writes (tests/fixtures/torch/torch_trace.json): cpu_op
with shape args, cuda_runtime launches, kernels with launch args, ac2g flow pairs, memcpy,
memset, annotations, python_function rows and metadata, in the same indented layout.

    python3 bench/gen_kineto_trace.py --size-mb 512 --out /tmp/kineto_512mb.json [--rank 0]
        [--ops-per-step N]

A ProfilerStep#k annotation spans each 64 launches (--ops-per-step, a multiple of 64): far more
steps than a real profile window holds (torch.profiler's schedule records a few active steps).
cko's time does not depend on it; HTA's does (add_iteration scans every step for each event), so
its benchmark also times a trace of a few steps (bench/kineto_bench.cpp).

Prints the event counts it wrote (JSON) so a benchmark can check what it parsed.
"""
import argparse
import json
import random
import sys

KERNELS = [
    "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT",
    "void at::native::vectorized_elementwise_kernel<8, at::native::GeluCUDAKernelImpl("
    "at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::"
    "{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> >"
    "(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::"
    "{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::"
    "{lambda(c10::BFloat16)#1}, std::array<char*, 2ul>)",
    "void at::native::(anonymous namespace)::cunn_SoftMaxForwardReg<float, float, float, "
    "at::native::(anonymous namespace)::SoftMaxForwardEpilogue, long, 4>(float*, float const*, long)",
    "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
]
CPU_OPS = ["aten::matmul", "aten::mm", "aten::gelu", "aten::softmax", "aten::to", "aten::sum"]


def cpu_op(name, ts, dur, ext):
    return (
        '  {\n    "ph": "X", "cat": "cpu_op", "name": "%s", "pid": 968, "tid": 968,\n'
        '    "ts": %.3f, "dur": %.3f,\n    "args": {\n      "External id": %d,"Sequence number": 0, '
        '"Fwd thread id": 0, "Record function id": 0, "Concrete Inputs": ["", ""], '
        '"Input type": ["c10::BFloat16", "c10::BFloat16"], "Input Strides": [[4096, 1], [4096, 1]], '
        '"Input Dims": [[4096, 4096], [4096, 4096]], "Ev Idx": %d\n    }\n  }' % (name, ts, dur, ext, ext)
    )


def launch(ts, dur, corr, ext):
    return (
        '  {\n    "ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 968, "tid": 968,\n'
        '    "ts": %.3f, "dur": %.3f,\n    "args": {\n      "External id": %d, "cbid": 211, '
        '"correlation": %d\n    }\n  },\n'
        '  {\n    "ph": "s", "id": %d, "pid": 968, "tid": 968, "ts": %.3f,\n'
        '    "cat": "ac2g", "name": "ac2g"\n  }' % (ts, dur, ext, corr, corr, ts)
    )


def kernel(name, ts, dur, corr, ext):
    return (
        '  {\n    "ph": "X", "cat": "kernel", "name": "%s", "pid": 0, "tid": 7,\n'
        '    "ts": %.3f, "dur": %.3f,\n    "args": {\n      "External id": %d, "queued": 0, '
        '"device": 0, "context": 1, "stream": 7, "correlation": %d, "registers per thread": 168, '
        '"shared memory": 213188, "blocks per SM": 1.0, "warps per SM": 12.0, "grid": [2, 66, 1], '
        '"block": [384, 1, 1], "est. achieved occupancy %%": 0\n    }\n  },\n'
        '  {\n    "ph": "f", "id": %d, "pid": 0, "tid": 7, "ts": %.3f,\n'
        '    "cat": "ac2g", "name": "ac2g", "bp": "e"\n  }' % (name, ts, dur, ext, corr, corr, ts)
    )


def memcpy(ts, dur, corr, ext):
    return (
        '  {\n    "ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pinned)", '
        '"pid": 0, "tid": 7,\n    "ts": %.3f, "dur": %.3f,\n    "args": {\n      "External id": %d, '
        '"device": 0, "context": 1, "stream": 7, "correlation": %d, "bytes": 4, '
        '"memory bandwidth (GB/s)": 0.0020491803278688526\n    }\n  }' % (ts, dur, ext, corr)
    )


def python_fn(ts, dur, n):
    return (
        '  {\n    "ph": "X", "cat": "python_function", "name": "torch/nn/modules/module.py(1751): '
        '_call_impl", "pid": 968, "tid": 968,\n    "ts": %.3f, "dur": %.3f,\n    "args": {\n'
        '      "Python parent id": %d, "Python id": %d, "Ev Idx": %d\n    }\n  }' % (ts, dur, n, n + 1, n)
    )


def profiler_step(corr, start, end):
    return ('  {\n    "ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d", '
            '"pid": 968, "tid": 968,\n    "ts": %.3f, "dur": %.3f,\n    "args": {\n'
            '      "External id": %d\n    }\n  }' % (corr, start, end - start, corr))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=float, default=512)
    ap.add_argument("--out", required=True)
    ap.add_argument("--rank", type=int, default=None)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ops-per-step", type=int, default=64)
    args = ap.parse_args()
    if args.ops_per_step < 64 or args.ops_per_step % 64 != 0:
        sys.exit("--ops-per-step: a multiple of 64")
    blocks_per_step = args.ops_per_step // 64
    rng = random.Random(args.seed)
    target = int(args.size_mb * 1e6)
    counts = {"events": 0, "kernel": 0, "cuda_runtime": 0, "ac2g_s": 0, "ac2g_f": 0,
              "gpu_memcpy": 0, "cpu_op": 0, "python_function": 0, "user_annotation": 0}
    head = {"schemaVersion": 1,
            "deviceProperties": [{"id": 0, "name": "NVIDIA H200", "totalGlobalMem": 150109880320,
                                  "computeMajor": 9, "computeMinor": 0, "numSms": 132}],
            "cuda_driver_version": 13000, "cuda_runtime_version": 13000, "cupti_version": 130001}
    if args.rank is not None:
        head["distributedInfo"] = {"backend": "nccl", "rank": args.rank, "world_size": 8}
    written = 0
    with open(args.out, "w") as out:
        text = "{\n" + ",\n".join('  "%s": %s' % (k, json.dumps(v)) for k, v in head.items())
        text += ',\n  "traceEvents": [\n'
        out.write(text)
        written += len(text)
        ts = 5122375887118.662
        corr = 1
        first = True
        blocks = 0
        step_start = ts
        while written < target:
            block = []
            for _ in range(64):
                ext = corr
                block.append(python_fn(ts, 40.25, corr)); counts["python_function"] += 1
                block.append(cpu_op(rng.choice(CPU_OPS), ts + 1.5, 30.125, ext)); counts["cpu_op"] += 1
                block.append(launch(ts + 2.0, 5.5, corr, ext)); counts["cuda_runtime"] += 1
                counts["ac2g_s"] += 1
                if corr % 16 == 0:
                    block.append(memcpy(ts + 9.0, 1.952, corr, ext)); counts["gpu_memcpy"] += 1
                else:
                    dur = round(rng.uniform(2.0, 180.0), 3)
                    block.append(kernel(rng.choice(KERNELS), ts + 9.0, dur, corr, ext))
                    counts["kernel"] += 1
                    counts["ac2g_f"] += 1
                corr += 1
                ts += 41.0
            blocks += 1
            if blocks % blocks_per_step == 0:
                block.append(profiler_step(corr, step_start, ts))
                step_start = ts
                counts["user_annotation"] += 1
            text = (",\n" if not first else "") + ",\n".join(block)
            first = False
            out.write(text)
            written += len(text)
        if blocks % blocks_per_step != 0:  # the last step, cut short by the size
            text = ",\n" + profiler_step(corr, step_start, ts)
            counts["user_annotation"] += 1
            out.write(text)
            written += len(text)
        tail = ('\n  ],\n  "traceName": "%s"\n}\n' % args.out)
        out.write(tail)
    counts["events"] = sum(v for k, v in counts.items() if k != "events")
    json.dump(counts, sys.stdout)
    print()


if __name__ == "__main__":
    main()
