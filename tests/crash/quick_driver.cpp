// The crash harness's fast driver (same behaviour as quick_driver.py, without an interpreter's
// start-up). Each subject's latency is the number in <subject path>/speed.txt, +-1 % noise.
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iostream>
#include <random>
#include <string>

int main(int argc, char** argv) {
    std::string request_path;
    for (int i = 1; i + 1 < argc; ++i) {
        if (std::strcmp(argv[i], "--request") == 0) {
            request_path = argv[i + 1];
        }
    }
    if (request_path.empty()) {
        std::cerr << "usage: quick_driver --request FILE\n";
        return 2;
    }
    const nlohmann::json request = nlohmann::json::parse(std::ifstream(request_path));
    const int n = request.at("samples").get<int>();
    const auto& primary = request.at("objective").at("primary");
    std::mt19937_64 rng(request.value("seed", std::uint64_t{0}) ^
                        static_cast<std::uint64_t>(::getpid()));
    std::uniform_real_distribution<double> noise(-0.01, 0.01);
    nlohmann::json subjects = nlohmann::json::array();
    for (const auto& s : request.at("subjects")) {
        double base = 0;
        std::ifstream(s.at("path").get<std::string>() + "/speed.txt") >> base;
        nlohmann::json metrics = nlohmann::json::object();
        for (const auto& m : request.at("correctness").at("metrics")) {
            metrics[m.get<std::string>()] = 0.0;
        }
        nlohmann::json samples = nlohmann::json::array();
        for (int i = 0; i < n; ++i) {
            samples.push_back(base * (1 + noise(rng)));
        }
        subjects.push_back(
            {{"role", s.at("role")},
             {"correctness", {{"status", "passed"}, {"metrics", metrics}}},
             {"measurements",
              {{"primary",
                {{"name", primary.at("name")}, {"unit", primary.at("unit")}, {"samples", samples}}},
               {"constraints", nlohmann::json::array()}}}});
    }
    std::ofstream(request.at("result_path").get<std::string>()) << nlohmann::json{
        {"format_version", "cko/driver-result-v1"},
        {"subjects", subjects},
        {"environment", nlohmann::json::object()},
        {"artifacts", nlohmann::json::array()}}.dump();
    return 0;
}
