// Timers for one timed call: steady_clock on the CPU; CUDA events (+ optional L2 flush) under nvcc.
#pragma once

#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>

#if defined(__CUDACC__) || defined(CKO_DRIVER_WITH_CUDA)
#define CKO_DRIVER_HAS_CUDA 1
#include <cuda_runtime.h>
#endif

namespace cko_driver {

// Nanoseconds per unit for the time units a primary metric may be requested in; 0 when unknown.
inline double ns_per_unit(const std::string& unit) {
    if (unit == "ns")
        return 1.0;
    if (unit == "us")
        return 1e3;
    if (unit == "ms")
        return 1e6;
    if (unit == "s")
        return 1e9;
    return 0.0;
}

class Timer {
public:
    virtual ~Timer() = default;
    virtual const char* name() const = 0;
    virtual void before_each() {}  // untimed preparation of every timed call (e.g. L2 flush)
    virtual double time_ns(const std::function<void()>& call) = 0;
};

// Wall time by std::chrono::steady_clock. GPU work must be synchronized inside the call.
class CpuTimer : public Timer {
public:
    const char* name() const override { return "cpu_steady_clock"; }
    double time_ns(const std::function<void()>& call) override {
        const auto start = std::chrono::steady_clock::now();
        call();
        const auto stop = std::chrono::steady_clock::now();
        return static_cast<double>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(stop - start).count());
    }
};

#ifdef CKO_DRIVER_HAS_CUDA

inline void cuda_check(cudaError_t err, const char* what) {
    if (err != cudaSuccess)
        throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(err));
}

// Device time between two events recorded on `stream` around the call. With flush_l2, a buffer of
// twice the L2 size (cudaDevAttrL2CacheSize) is cleared on the stream before each timed call,
// outside the events, so every sample starts with a cold L2.
class CudaEventTimer : public Timer {
public:
    CudaEventTimer(cudaStream_t stream, bool flush_l2) : stream_(stream) {
        cuda_check(cudaEventCreate(&start_), "cudaEventCreate");
        cuda_check(cudaEventCreate(&stop_), "cudaEventCreate");
        if (flush_l2) {
            int device = 0, l2 = 0;
            cuda_check(cudaGetDevice(&device), "cudaGetDevice");
            cuda_check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device),
                       "cudaDeviceGetAttribute(L2)");
            flush_bytes_ = 2 * static_cast<size_t>(l2 > 0 ? l2 : 64 << 20);
            cuda_check(cudaMalloc(&flush_, flush_bytes_), "cudaMalloc(L2 flush buffer)");
        }
    }
    ~CudaEventTimer() override {
        if (flush_)
            cudaFree(flush_);
        cudaEventDestroy(start_);
        cudaEventDestroy(stop_);
    }
    CudaEventTimer(const CudaEventTimer&) = delete;
    CudaEventTimer& operator=(const CudaEventTimer&) = delete;

    const char* name() const override { return flush_ ? "cuda_event_l2_flush" : "cuda_event"; }
    void before_each() override {
        if (flush_)
            cuda_check(cudaMemsetAsync(flush_, 0, flush_bytes_, stream_),
                       "cudaMemsetAsync(L2 flush)");
    }
    double time_ns(const std::function<void()>& call) override {
        cuda_check(cudaEventRecord(start_, stream_), "cudaEventRecord");
        call();
        cuda_check(cudaEventRecord(stop_, stream_), "cudaEventRecord");
        cuda_check(cudaEventSynchronize(stop_), "cudaEventSynchronize");
        cuda_check(cudaGetLastError(), "kernel launch");
        float ms = 0.0f;
        cuda_check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
        return static_cast<double>(ms) * 1e6;
    }

private:
    cudaStream_t stream_;
    cudaEvent_t start_ = nullptr;
    cudaEvent_t stop_ = nullptr;
    void* flush_ = nullptr;
    size_t flush_bytes_ = 0;
};

#endif  // CKO_DRIVER_HAS_CUDA

}  // namespace cko_driver
