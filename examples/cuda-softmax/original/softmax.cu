// cuda-softmax original: row softmax with one thread per row and three passes over the row
// (max, sum of exp, write). Neighbouring threads read addresses a whole row apart (uncoalesced),
// and there are only `rows` threads: the naive baseline.
#include <cuda_runtime.h>
#include <math.h>

__global__ void softmax_rows_naive(const float* in, float* out, int rows, int cols) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float* x = in + static_cast<size_t>(r) * cols;
  float* y = out + static_cast<size_t>(r) * cols;
  float m = -INFINITY;
  for (int c = 0; c < cols; ++c) m = fmaxf(m, x[c]);
  float s = 0.0f;
  for (int c = 0; c < cols; ++c) s += expf(x[c] - m);
  for (int c = 0; c < cols; ++c) y[c] = expf(x[c] - m) / s;
}

// out[r][c] = exp(in[r][c]) / sum_c exp(in[r][c]) for row-major rows x cols; returns a cudaError_t.
extern "C" int softmax_forward(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  const int threads = 128;
  softmax_rows_naive<<<(rows + threads - 1) / threads, threads, 0, stream>>>(in, out, rows, cols);
  return static_cast<int>(cudaGetLastError());
}
