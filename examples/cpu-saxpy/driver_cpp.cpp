// cpu-saxpy driver (C++ SDK): builds each subject's saxpy.cpp into a cached shared library, times
// saxpy_run with steady_clock on the case's arrays, and checks out = a*x + y against a double
// reference. Build: make -C examples/cpu-saxpy   (-> examples/cpu-saxpy/build/driver_cpp) Usage (by
// cko): build/driver_cpp --request <request.json>
#include <sys/stat.h>

#include <cmath>
#include <fstream>
#include <random>
#include <sstream>
#include <vector>

#include "cko_driver.hpp"

namespace {

using SaxpyFn = void(float a, const float* x, const float* y, float* out, int rows, int cols);
const std::vector<std::string> kCompile = {"g++", "-O2", "-std=c++17", "-shared", "-fPIC"};

// A subject is its snapshot directory (holding saxpy.cpp) or the source file itself.
std::string subject_source(const std::string& path) {
    struct stat st {};
    return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode) ? path + "/saxpy.cpp" : path;
}

double number(const cko_driver::json::Value& obj, const char* key) {
    const cko_driver::json::Value* v = obj.find(key);
    if (!v || v->kind != cko_driver::json::Value::Kind::number)
        throw std::runtime_error(std::string("case.") + key);
    return v->number;
}

struct Inputs {
    int rows = 0, cols = 0;
    float a = 0;
    std::vector<float> x, y;
    std::vector<double> expected;
};

class SaxpyRun : public cko_driver::SubjectRun {
public:
    SaxpyRun(const std::string& source, const Inputs& in)
        : lib_(cko_driver::compile_shared_library(source, kCompile, "cko-cpu-saxpy")),
          fn_(lib_.symbol<SaxpyFn>("saxpy_run")),
          in_(in),
          out_(in.x.size(), 0.0f) {}

    void run() override { fn_(in_.a, in_.x.data(), in_.y.data(), out_.data(), in_.rows, in_.cols); }

    cko_driver::Check check() override {
        double err = 0;
        for (size_t k = 0; k < out_.size(); ++k) {
            const double e = in_.expected[k];
            const double rel = std::abs(static_cast<double>(out_[k]) - e) / std::abs(e);
            if (!(rel <= err))
                err = rel;  // also keeps a NaN, which the SDK turns into status failed
        }
        return {"passed", {{"max_rel_err", err}}};
    }

private:
    cko_driver::SharedLibrary lib_;
    SaxpyFn* fn_;
    const Inputs& in_;
    std::vector<float> out_;
};

class Saxpy : public cko_driver::Workload {
public:
    // The inputs depend only on the case and no subject writes into x or y: a session builds them
    // once per case (cko_driver::PerCase), not once per request.
    void setup(const cko_driver::Request& request) override {
        in_ = &cases_.get(request, [&] { return load(request); });
    }

    std::unique_ptr<cko_driver::SubjectRun> prepare(const cko_driver::Subject& subject,
                                                    const cko_driver::Request&) override {
        return std::make_unique<SaxpyRun>(subject_source(subject.path), *in_);
    }

private:
    static Inputs load(const cko_driver::Request& request) {
        Inputs in;
        std::ifstream file(request.case_.path);
        std::stringstream text;
        text << file.rdbuf();
        const cko_driver::json::Value c = cko_driver::json::parse(text.str());
        in.rows = static_cast<int>(number(c, "rows"));
        in.cols = static_cast<int>(number(c, "cols"));
        in.a = static_cast<float>(number(c, "a"));
        const size_t n = static_cast<size_t>(in.rows) * static_cast<size_t>(in.cols);
        std::mt19937_64 rng(static_cast<std::uint64_t>(number(c, "seed")));
        std::uniform_real_distribution<float> dist(0.5f, 1.5f);  // positive: a*x + y never cancels
        in.x.resize(n);
        in.y.resize(n);
        in.expected.resize(n);
        for (size_t k = 0; k < n; ++k)
            in.x[k] = dist(rng);
        for (size_t k = 0; k < n; ++k)
            in.y[k] = dist(rng);
        for (size_t k = 0; k < n; ++k)
            in.expected[k] = double(in.a) * in.x[k] + in.y[k];
        return in;
    }

    cko_driver::PerCase<Inputs> cases_;
    const Inputs* in_ = nullptr;
};

}  // namespace

int main(int argc, char** argv) {
    Saxpy workload;
    return cko_driver::run_driver(argc, argv, workload);
}
