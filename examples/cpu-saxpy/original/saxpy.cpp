// cpu-saxpy original: out = a*x + y over row-major rows x cols float arrays, walked column by
// column. The inner loop strides by a whole row, so every access lands on a different cache line
// (and often page): the cache-hostile baseline that the candidate improves on.
#include <cstddef>

extern "C" void saxpy_run(float a, const float* x, const float* y, float* out, int rows, int cols) {
    for (int j = 0; j < cols; ++j)
        for (int i = 0; i < rows; ++i) {
            const std::size_t k = static_cast<std::size_t>(i) * cols + j;
            out[k] = a * x[k] + y[k];
        }
}
