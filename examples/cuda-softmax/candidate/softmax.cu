// cuda-softmax candidate: one 256-thread block per row. Each thread keeps an online (max, sum) over
// its strided, coalesced float4 loads (one pass instead of two), the block merges the pairs with warp
// shuffles and one shared-memory step, then writes exp(x - max) / sum in a second coalesced pass.
#include <cuda_runtime.h>
#include <math.h>

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

struct MaxSum {
  float m;  // running maximum
  float s;  // sum of exp(x - m)
};

__device__ __forceinline__ MaxSum merge(MaxSum a, MaxSum b) {
  const float m = fmaxf(a.m, b.m);
  if (m == -INFINITY) return {m, 0.0f};  // both empty
  return {m, a.s * expf(a.m - m) + b.s * expf(b.m - m)};
}

__device__ __forceinline__ MaxSum add(MaxSum a, float x) {
  if (x <= a.m) return {a.m, a.s + expf(x - a.m)};
  return {x, a.s * expf(a.m - x) + 1.0f};
}

__device__ __forceinline__ MaxSum warp_merge(MaxSum v) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    MaxSum other{__shfl_xor_sync(0xffffffffu, v.m, offset), __shfl_xor_sync(0xffffffffu, v.s, offset)};
    v = merge(v, other);
  }
  return v;
}

__global__ void __launch_bounds__(kThreads) softmax_rows_fused(const float* in, float* out, int cols) {
  const float* x = in + static_cast<size_t>(blockIdx.x) * cols;
  float* y = out + static_cast<size_t>(blockIdx.x) * cols;
  const bool vec4 = (cols % 4) == 0;  // rows then stay 16-byte aligned (cudaMalloc is 256-aligned)

  MaxSum acc{-INFINITY, 0.0f};
  if (vec4) {
    const float4* x4 = reinterpret_cast<const float4*>(x);
    for (int i = threadIdx.x; i < cols / 4; i += kThreads) {
      const float4 v = x4[i];
      acc = add(add(add(add(acc, v.x), v.y), v.z), v.w);
    }
  } else {
    for (int i = threadIdx.x; i < cols; i += kThreads) acc = add(acc, x[i]);
  }

  __shared__ MaxSum partial[kWarps];
  __shared__ MaxSum total;
  acc = warp_merge(acc);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) partial[warp] = acc;
  __syncthreads();
  if (warp == 0) {
    MaxSum v = lane < kWarps ? partial[lane] : MaxSum{-INFINITY, 0.0f};
    v = warp_merge(v);
    if (lane == 0) total = v;
  }
  __syncthreads();
  const float m = total.m, inv = 1.0f / total.s;

  if (vec4) {
    const float4* x4 = reinterpret_cast<const float4*>(x);
    float4* y4 = reinterpret_cast<float4*>(y);
    for (int i = threadIdx.x; i < cols / 4; i += kThreads) {
      const float4 v = x4[i];
      y4[i] = make_float4(expf(v.x - m) * inv, expf(v.y - m) * inv, expf(v.z - m) * inv, expf(v.w - m) * inv);
    }
  } else {
    for (int i = threadIdx.x; i < cols; i += kThreads) y[i] = expf(x[i] - m) * inv;
  }
}

}  // namespace

// out[r][c] = exp(in[r][c]) / sum_c exp(in[r][c]) for row-major rows x cols; returns a cudaError_t.
extern "C" int softmax_forward(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  if (rows > 0) softmax_rows_fused<<<rows, kThreads, 0, stream>>>(in, out, cols);
  return static_cast<int>(cudaGetLastError());
}
