// `profile ncu`'s text table through the verb table: a long table (written in two halves, the
// second on another thread) against the short one's rows.
#include "cko/util/files.hpp"
#include "cko/verbs/frame.hpp"
#include "cko/verbs/verb.hpp"
#include "cko_test_support.hpp"

#include <fmt/format.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace cko::verbs {
namespace {

class NcuTableTest : public test::ScratchTest {
protected:
    // `profile ncu FILE` as the CLI runs it without --json: the outcome's text.
    static std::string ncu_text(const std::string& file) {
        const Verb* verb = find_verb_by_tool_name("profile_ncu");
        EXPECT_NE(verb, nullptr);
        Context context;
        context.want_text = true;
        context.want_document = false;
        return run_operation(*verb, Json{{"file", file}}, context).text;
    }
};

// A table of at least 4,096 launches is written in two halves, the second on another thread:
// the rows come out in launch order, each as the one-thread table of the same launch writes it.
TEST_F(NcuTableTest, ALongTableIsTheShortTablesRowsInLaunchOrder) {
    const std::string text = read_file_capped("tests/fixtures/ncu/ncu_raw.csv", 1 << 20);
    const std::size_t header = text.find("\"ID\",");
    const std::size_t units = text.find('\n', header) + 1;
    const std::size_t rows = text.find('\n', units) + 1;
    std::vector<std::string> tails;  // each data row after its ID cell
    for (std::size_t at = rows; at < text.size() && text[at] == '"';) {
        const std::size_t end = text.find('\n', at) + 1;
        const std::size_t close = text.find('"', at + 1);
        tails.push_back(text.substr(close, end - close));
        at = end;
    }
    ASSERT_EQ(tails.size(), 7U);
    std::string long_page = text.substr(header, rows - header);
    constexpr std::size_t kLaunches = 5000;
    for (std::size_t id = 1; id <= kLaunches; ++id) {
        long_page += fmt::format("\"{}", id) + tails[(id - 1) % tails.size()];
    }
    put(dir_ / "long.csv", long_page);
    const auto table = [](const std::string& out) {
        std::vector<std::string> lines;
        std::size_t at = out.find("\n  id  kernel");
        at = out.find('\n', at + 1) + 1;
        // The rows end where the roofline line starts.
        for (std::size_t end; (end = out.find('\n', at)) != std::string::npos &&
                              out.compare(at, 9, "roofline ") != 0;
             at = end + 1) {
            lines.push_back(out.substr(at, end - at));
        }
        return lines;
    };
    const std::vector<std::string> short_rows = table(ncu_text("tests/fixtures/ncu/ncu_raw.csv"));
    ASSERT_EQ(short_rows.size(), 7U);
    const std::vector<std::string> long_rows = table(ncu_text((dir_ / "long.csv").string()));
    ASSERT_EQ(long_rows.size(), kLaunches);
    for (std::size_t id = 1; id <= kLaunches; ++id) {
        const std::string& same = short_rows[(id - 1) % short_rows.size()];
        ASSERT_EQ(long_rows[id - 1], fmt::format("{:>4}", id) + same.substr(4)) << id;
    }
}

}  // namespace
}  // namespace cko::verbs
