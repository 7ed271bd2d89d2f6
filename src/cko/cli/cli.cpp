// The command-line shell: CLI11 dispatch, --json/--request plumbing, one printed error.
#include "cko/cli/command.hpp"

#include "cko/cli/verbs.hpp"
#include "cko/util/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <vector>

namespace cko::cli {
namespace {

struct Verb {
    CLI::App* app = nullptr;
    Handler handler;
    bool json = false;
    std::string request_path;
};

// Verbs registered for the current run_cli call (one command line per process).
std::vector<std::unique_ptr<Verb>>& verbs() {
    static std::vector<std::unique_ptr<Verb>> all;
    return all;
}

bool g_json_output = false;

// The last parsed verb: a verb may hold another (`cko sass diff`), and the inner one is registered
// after its parent.
Verb* selected_verb() {
    for (auto it = verbs().rbegin(); it != verbs().rend(); ++it) {
        if ((*it)->app->parsed()) {
            return it->get();
        }
    }
    return nullptr;
}

bool wants_json(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        if (std::string_view(argv[i]) == "--json") {
            return true;
        }
    }
    return false;
}

std::string scalar_text(const Json& value, const std::string& key) {
    if (value.is_string()) {
        const auto& text = value.get_ref<const std::string&>();
        if (text.find('\0') != std::string::npos) {  // argv words end at a NUL: it would truncate silently
            throw Error(ErrorCode::invalid_request,
                        fmt::format("request key \"{}\": the string holds a NUL character (\\u0000); remove it", key),
                        Json{{"key", key}});
        }
        return text;
    }
    if (value.is_number()) {
        return value.dump();
    }
    throw Error(ErrorCode::invalid_request,
                fmt::format("request key \"{}\": expected a string or a number, got {}", key,
                            value.type_name()),
                Json{{"key", key}});
}

// Turns the request object into command-line words for `verb`; unknown keys are an error.
std::vector<std::string> request_words(const Verb& verb, const Json& request) {
    if (!request.is_object()) {
        throw Error(ErrorCode::invalid_request, "a --request file must hold one JSON object");
    }
    std::vector<std::string> named;
    std::vector<std::string> positional;
    for (const auto& [key, value] : request.items()) {
        std::string option_name = key;
        for (char& c : option_name) {
            if (c == '_') {
                c = '-';
            }
        }
        CLI::Option* opt = key == "request" ? nullptr : verb.app->get_option_no_throw("--" + option_name);
        if (opt == nullptr) {
            opt = verb.app->get_option_no_throw(key);  // positional arguments go by their bare name
            if (opt != nullptr && !opt->get_positional()) {
                opt = nullptr;
            }
        }
        if (opt == nullptr) {
            std::vector<std::string> known;
            for (const CLI::Option* o : verb.app->get_options()) {
                std::string n = o->get_single_name();
                if (n != "help" && n != "request") {
                    known.push_back(n);
                }
            }
            throw Error(ErrorCode::invalid_request,
                        fmt::format("request key \"{}\" is not an option of '{}'; known keys: {}",
                                    key, verb.app->get_name(), fmt::join(known, ", ")),
                        Json{{"key", key}, {"known", known}});
        }
        if (opt->get_positional()) {
            const Json items = value.is_array() ? value : Json::array({value});
            for (const auto& item : items) {
                positional.push_back(scalar_text(item, key));
            }
            continue;
        }
        if (value.is_boolean()) {
            if (opt->get_expected_max() != 0) {
                throw Error(ErrorCode::invalid_request,
                            fmt::format("request key \"{}\" takes a value, not true/false", key),
                            Json{{"key", key}});
            }
            if (value.get<bool>()) {
                named.push_back("--" + option_name);
            }
            continue;
        }
        const Json items = value.is_array() ? value : Json::array({value});
        for (const auto& item : items) {
            named.push_back("--" + option_name);
            named.push_back(scalar_text(item, key));
        }
    }
    if (!positional.empty()) {
        named.emplace_back("--");
        named.insert(named.end(), positional.begin(), positional.end());
    }
    return named;
}

// With --request FILE: the words of the command line with the request's options spliced in, so
// that one parse sees everything (required options may come from the file). Empty otherwise.
std::vector<std::string> merge_request(CLI::App& app, int argc, char** argv) {
    std::string request_path;
    std::vector<std::string> words;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg(argv[i]);
        if (arg == "--") {
            for (; i < argc; ++i) {
                words.emplace_back(argv[i]);
            }
            break;
        }
        if (arg == "--request" && i + 1 < argc) {
            request_path = argv[++i];
            continue;
        }
        if (arg.starts_with("--request=")) {
            request_path = std::string(arg.substr(10));
            continue;
        }
        words.emplace_back(arg);
    }
    if (request_path.empty()) {
        return {};
    }
    // The verb path: leading words that name subcommands.
    CLI::App* current = &app;
    std::size_t prefix = 0;
    for (; prefix < words.size(); ++prefix) {
        const std::string& word = words[prefix];
        const auto subs = current->get_subcommands([&word](CLI::App* a) { return a->check_name(word); });
        if (subs.empty()) {
            break;
        }
        current = subs.front();
    }
    Verb* verb = nullptr;
    for (auto& v : verbs()) {
        if (v->app == current) {
            verb = v.get();
        }
    }
    if (verb == nullptr) {
        throw Error(ErrorCode::usage, "--request needs a verb before it, e.g. cko self-check --request r.json");
    }
    const Json request = read_json_file(request_path);
    std::vector<std::string> extra = request_words(*verb, request);
    const auto dashdash = std::find(extra.begin(), extra.end(), "--");
    std::vector<std::string> named(extra.begin(), dashdash);
    std::vector<std::string> positional(dashdash == extra.end() ? extra.end() : dashdash + 1, extra.end());
    std::vector<std::string> merged(words.begin(), words.begin() + static_cast<std::ptrdiff_t>(prefix));
    merged.insert(merged.end(), named.begin(), named.end());
    merged.insert(merged.end(), words.begin() + static_cast<std::ptrdiff_t>(prefix), words.end());
    if (!positional.empty()) {
        if (std::find(merged.begin(), merged.end(), "--") == merged.end()) {
            merged.emplace_back("--");
        }
        merged.insert(merged.end(), positional.begin(), positional.end());
    }
    return merged;
}

void print_error(const Error& e, bool json) {
    std::fprintf(stderr, "cko: error[%s]: %s\n", std::string(error_code_name(e.code())).c_str(), e.what());
    if (json) {
        std::cout << printable_json(e.to_json()) << '\n';
    }
}

// Every verb under `app`: name, summary, and the verbs of a group (e.g. `profile`).
Json verb_table(const CLI::App& app) {
    Json out = Json::array();
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
        Json row{{"name", sub->get_name()}, {"summary", sub->get_description()}};
        const Json children = verb_table(*sub);
        if (!children.empty()) {
            row["verbs"] = children;
        }
        out.push_back(row);
    }
    return out;
}

void build_app(CLI::App& app) {
    app.set_version_flag("--version", std::string("cko ") + CKO_VERSION);
    app.require_subcommand(1);
    app.fallthrough(false);
    // `cko help`: the top-level help (app.help() would describe the help verb itself), or with
    // --json the verb table as one document; a verb like any other, so --request works too.
    add_verb(app, "help", "Show the verbs and what they do", [&app] {
        return CommandResult{app.get_formatter()->make_help(&app, "cko", CLI::AppFormatMode::Normal),
                             Json{{"format_version", "cko/help-v1"}, {"version", CKO_VERSION},
                                  {"verbs", verb_table(app)}}};
    });
    register_self_check(app);
    register_doctor(app);
    register_target(app);
    register_store(app);
    register_driver(app);
    register_report(app);
    auto* profile = app.add_subcommand("profile", "Profiler evidence: parse reports into facts");
    profile->require_subcommand(1);
    register_profile(*profile);
    register_compiler(app);
    register_knowledge(app);
    register_map(app);
}

}  // namespace

bool json_output() noexcept { return g_json_output; }

namespace {
std::function<void(std::ostream&)>& json_writer() {
    static std::function<void(std::ostream&)> writer;
    return writer;
}
}  // namespace

void stream_json_output(std::function<void(std::ostream&)> writer) {
    json_writer() = std::move(writer);
}

CLI::App* add_verb(CLI::App& parent, const std::string& name, const std::string& description,
                   Handler handler) {
    auto verb = std::make_unique<Verb>();
    verb->app = parent.add_subcommand(name, description);
    verb->handler = std::move(handler);
    verb->app->add_flag("--json", verb->json, "Print one JSON document instead of the summary");
    verb->app->add_option("--request", verb->request_path,
                          "JSON object of this verb's options (keys are option names)");
    CLI::App* app = verb->app;
    verbs().push_back(std::move(verb));
    return app;
}

int run_cli(int argc, char** argv) {
    verbs().clear();
    json_writer() = nullptr;
    const bool json_hint = wants_json(argc, argv);
    CLI::App app{"cko: evidence-based GPU performance work", "cko"};
    try {
        build_app(app);
        try {
            const std::vector<std::string> words = merge_request(app, argc, argv);
            if (words.empty()) {
                app.parse(argc, argv);
            } else {
                std::vector<std::string> reversed(words.rbegin(), words.rend());
                app.parse(reversed);
            }
        } catch (const CLI::ParseError& e) {
            if (e.get_exit_code() == 0) {  // --help / --version
                return app.exit(e);
            }
            std::string message = e.what();
            throw Error(ErrorCode::usage, fmt::format("{} (run 'cko help')", message));
        }
        Verb* verb = selected_verb();
        if (verb == nullptr) {  // require_subcommand(1) makes every successful parse select a verb
            throw Error(ErrorCode::usage, "no verb given (run 'cko help')");
        }
        g_json_output = verb->json;
        CommandResult result = verb->handler();
        if (verb->json && json_writer()) {
            json_writer()(std::cout);
            json_writer() = nullptr;
        } else if (verb->json) {
            std::cout << printable_json(result.json) << '\n';
        } else {
            std::cout << result.text;
            if (!result.text.empty() && result.text.back() != '\n') {
                std::cout << '\n';
            }
        }
        std::cout.flush();
        return result.exit_code;
    } catch (const Error& e) {
        print_error(e, json_hint);
        return e.exit_code();
    } catch (const std::exception& e) {
        const Error wrapped(ErrorCode::internal, fmt::format("internal error: {}", e.what()));
        print_error(wrapped, json_hint);
        return wrapped.exit_code();
    }
}

}  // namespace cko::cli
