// The error check, the scratch directory and the whole-file helpers of cko_test_support.hpp.
#include "cko_test_support.hpp"

#include "cko/util/files.hpp"

#include <fmt/format.h>

#include <sys/stat.h>
#include <exception>
#include <fstream>
#include <iterator>

namespace cko::test {

const Error& CaughtError::operator*() const noexcept {
    static const Error nothing(ErrorCode::internal, "no cko::Error was thrown");
    return error_ ? *error_ : nothing;
}

CaughtError error_thrown_by(const std::function<void()>& statement) {
    try {
        statement();
    } catch (const Error& e) {
        return CaughtError(e);
    }
    return CaughtError();
}

namespace {

std::string described(const Error& e) {
    return fmt::format("cko::Error {}: {}\n  details: {}", error_code_name(e.code()), e.what(),
                       e.details().dump());
}

// Why `e` is not the error asked for; "" when it is.
std::string mismatch(const Error& e, std::optional<ErrorCode> code,
                     std::initializer_list<std::string_view> substrings) {
    if (code && e.code() != *code) {
        return "it throws " + described(e);
    }
    const std::string_view message = e.what();
    for (const std::string_view s : substrings) {
        if (message.find(s) == std::string_view::npos) {
            return fmt::format("its message lacks \"{}\": {}", s, described(e));
        }
    }
    return "";
}

}  // namespace

CaughtError expect_error(const std::function<void()>& statement, const char* statement_text,
                         std::optional<ErrorCode> code,
                         std::initializer_list<std::string_view> substrings, const char* file,
                         int line) {
    std::string expected = fmt::format("{} throws cko::Error", statement_text);
    if (code) {
        expected += fmt::format(" {}", error_code_name(*code));
    }
    for (const std::string_view s : substrings) {
        expected += fmt::format(" with \"{}\"", s);
    }
    std::string actual;
    CaughtError caught;
    try {
        statement();
        actual = "it throws nothing";
    } catch (const Error& e) {
        caught = CaughtError(e);
        actual = mismatch(e, code, substrings);
    } catch (const std::exception& e) {
        actual = fmt::format("it throws another exception: {}", e.what());
    } catch (...) {
        actual = "it throws something that is no std::exception";
    }
    if (!actual.empty()) {
        ADD_FAILURE_AT(file, line) << "Expected: " << expected << "\n  Actual: " << actual;
    }
    return caught;
}

TempDir::TempDir(std::string_view prefix) : path_(make_temp_dir(prefix)) {}

TempDir::~TempDir() {
    remove_tree_forcibly(path_);
}

std::filesystem::path write_file(const std::filesystem::path& path, std::string_view bytes) {
    if (path.has_parent_path()) {
        std::filesystem::create_directories(path.parent_path());
    }
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return path;
}

std::filesystem::path write_executable(const std::filesystem::path& path, std::string_view text) {
    (void)write_file(path, text);
    ::chmod(path.c_str(), 0755);
    return path;
}

std::string read_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void flip_bit(const std::filesystem::path& path, std::size_t offset) {
    ::chmod(path.c_str(), 0644);
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(offset));
    char c = 0;
    f.get(c);
    f.seekp(static_cast<std::streamoff>(offset));
    f.put(static_cast<char>(c ^ 0x01));
}

}  // namespace cko::test
