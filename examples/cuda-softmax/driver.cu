// cuda-softmax driver (C++/CUDA SDK): builds each subject's softmax.cu with nvcc into a cached shared
// library, dlopens it, times softmax_forward with CUDA events (L2 flushed before every sample) on the
// case's input, and checks the output against a double-precision host reference.
// Build: make -C examples/cuda-softmax   (-> examples/cuda-softmax/build/driver)
// Usage (by cko): build/driver --request <request.json>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <random>
#include <sstream>
#include <vector>

#include "cko_driver.hpp"

namespace {

using SoftmaxFn = int(const float* in, float* out, int rows, int cols, cudaStream_t stream);

void check_cuda(cudaError_t err, const char* what) { cko_driver::cuda_check(err, what); }

// nvcc from PATH, else the default CUDA install; the CUDA lib dir beside it becomes the library's rpath.
std::string find_nvcc() {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && access((dir + "/nvcc").c_str(), X_OK) == 0) return dir + "/nvcc";
  return "/usr/local/cuda/bin/nvcc";
}

std::vector<std::string> compile_command() {
  int device = 0;
  cudaDeviceProp prop{};
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  check_cuda(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  const std::string nvcc = find_nvcc();
  const std::string lib_dir = nvcc.substr(0, nvcc.rfind("/bin/")) + "/lib64";
  return {nvcc, "-O3", "-std=c++17", "-arch=sm_" + std::to_string(prop.major * 10 + prop.minor), "-shared",
          "-Xcompiler", "-fPIC", "-cudart", "shared", "-Xlinker", "-rpath=" + lib_dir};
}

// A subject is its snapshot directory (holding softmax.cu) or the source file itself.
std::string subject_source(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode) ? path + "/softmax.cu" : path;
}

int case_int(const cko_driver::json::Value& c, const char* key) {
  const cko_driver::json::Value* v = c.find(key);
  if (!v || !v->is_integer() || v->number < 0) throw std::runtime_error(std::string("case.") + key);
  return static_cast<int>(v->number);
}

// One case's input on the device and its float64 reference; owns the device buffer (move-only).
struct Inputs {
  int rows = 0, cols = 0;
  float* device_in = nullptr;
  std::vector<double> expected;
  Inputs() = default;
  Inputs(Inputs&& o) noexcept : rows(o.rows), cols(o.cols), device_in(o.device_in), expected(std::move(o.expected)) {
    o.device_in = nullptr;
  }
  Inputs& operator=(Inputs&&) = delete;
  ~Inputs() { cudaFree(device_in); }
};

class SoftmaxRun : public cko_driver::SubjectRun {
 public:
  SoftmaxRun(const std::string& source, const std::vector<std::string>& compile, const Inputs& in)
      : lib_(cko_driver::compile_shared_library(source, compile, "cko-cuda-softmax")),
        fn_(lib_.symbol<SoftmaxFn>("softmax_forward")),
        in_(in) {
    check_cuda(cudaMalloc(&out_, in.expected.size() * sizeof(float)), "cudaMalloc(out)");
    check_cuda(cudaMemset(out_, 0xff, in.expected.size() * sizeof(float)), "cudaMemset(out)");  // NaNs
  }
  ~SoftmaxRun() override { cudaFree(out_); }

  void run() override {
    const int err = fn_(in_.device_in, out_, in_.rows, in_.cols, nullptr);
    if (err != 0) check_cuda(static_cast<cudaError_t>(err), "softmax_forward");
  }

  cko_driver::Check check() override {
    std::vector<float> out(in_.expected.size());
    check_cuda(cudaMemcpy(out.data(), out_, out.size() * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy");
    double rel = 0, abs_err = 0;
    for (size_t k = 0; k < out.size(); ++k) {
      const double d = std::abs(static_cast<double>(out[k]) - in_.expected[k]);
      if (!(d <= abs_err)) abs_err = d;  // keeps a NaN: the SDK then reports status failed
      if (!(d / in_.expected[k] <= rel)) rel = d / in_.expected[k];
    }
    return {"passed", {{"max_rel_err", rel}, {"max_abs_err", abs_err}}};
  }

 private:
  cko_driver::SharedLibrary lib_;
  SoftmaxFn* fn_;
  const Inputs& in_;
  float* out_ = nullptr;
};

class Softmax : public cko_driver::Workload {
 public:
  // The input depends only on the case and softmax does not write into it: a session builds it
  // once per case (cko_driver::PerCase), not once per request.
  void setup(const cko_driver::Request& request) override {
    in_ = &cases_.get(request, [&] { return load(request); });
    if (compile_.empty()) compile_ = compile_command();
  }

  std::unique_ptr<cko_driver::SubjectRun> prepare(const cko_driver::Subject& subject,
                                                  const cko_driver::Request&) override {
    return std::make_unique<SoftmaxRun>(subject_source(subject.path), compile_, *in_);
  }

 private:
  static Inputs load(const cko_driver::Request& request) {
    std::ifstream file(request.case_.path);
    std::stringstream text;
    text << file.rdbuf();
    const cko_driver::json::Value c = cko_driver::json::parse(text.str());
    Inputs in;
    in.rows = case_int(c, "rows");
    in.cols = case_int(c, "cols");
    const size_t n = static_cast<size_t>(in.rows) * static_cast<size_t>(in.cols);
    std::mt19937_64 rng(static_cast<std::uint64_t>(case_int(c, "seed")));
    std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
    std::vector<float> host(n);
    for (auto& v : host) v = dist(rng);
    in.expected.resize(n);
    for (int r = 0; r < in.rows; ++r) {
      const float* x = &host[static_cast<size_t>(r) * in.cols];
      double* y = &in.expected[static_cast<size_t>(r) * in.cols];
      double m = -INFINITY, s = 0;
      for (int k = 0; k < in.cols; ++k) m = std::max(m, double(x[k]));
      for (int k = 0; k < in.cols; ++k) s += std::exp(double(x[k]) - m);
      for (int k = 0; k < in.cols; ++k) y[k] = std::exp(double(x[k]) - m) / s;
    }
    check_cuda(cudaMalloc(&in.device_in, n * sizeof(float)), "cudaMalloc(in)");
    check_cuda(cudaMemcpy(in.device_in, host.data(), n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy(in)");
    return in;
  }

  cko_driver::PerCase<Inputs> cases_;
  const Inputs* in_ = nullptr;
  std::vector<std::string> compile_;
};

}  // namespace

int main(int argc, char** argv) {
  Softmax workload;
  cko_driver::Options options;
  options.timer = cko_driver::TimerKind::cuda_events;
  options.flush_l2 = true;
  options.warmup_s = 0.1;
  return cko_driver::run_driver(argc, argv, workload, options);
}
