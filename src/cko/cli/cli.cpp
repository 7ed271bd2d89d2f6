// The command-line adapter: CLI11 options built from the verb table, --json/--request plumbing,
// the outcome printed (summary or document), one printed error.
#include "cko/cli/command.hpp"

#include "cko/mcp/server.hpp"
#include "cko/util/build_info.hpp"
#include "cko/util/error.hpp"
#include "cko/verbs/frame.hpp"
#include "cko/verbs/verb.hpp"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <unistd.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <memory>
#include <vector>

namespace cko::cli {
namespace {

using verbs::Param;
using verbs::ParamType;

// Where CLI11 writes one parameter's value; the request is built from the options given.
struct Slot {
    const Param* param = nullptr;
    CLI::Option* option = nullptr;
    std::string text;
    std::int64_t integer = 0;
    double number = 0;
    bool flag = false;
    std::vector<std::string> list;
};

struct Verb {
    CLI::App* app = nullptr;
    const verbs::Verb* row = nullptr;  // null for `mcp`, the one verb that is not an operation
    std::vector<std::unique_ptr<Slot>> slots;
    bool json = false;
    std::string request_path;
};

// Verbs registered for the current run_cli call (one command line per process).
std::vector<std::unique_ptr<Verb>>& verbs() {
    static std::vector<std::unique_ptr<Verb>> all;
    return all;
}

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
        if (text.find('\0') !=
            std::string::npos) {  // argv words end at a NUL: it would truncate silently
            throw Error(
                ErrorCode::invalid_request,
                fmt::format(
                    "request key \"{}\": the string holds a NUL character (\\u0000); remove it",
                    key),
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
        CLI::Option* opt =
            key == "request" ? nullptr : verb.app->get_option_no_throw("--" + option_name);
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
        const auto subs =
            current->get_subcommands([&word](CLI::App* a) { return a->check_name(word); });
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
        throw Error(ErrorCode::usage,
                    "--request needs a verb before it, e.g. cko self-check --request r.json");
    }
    const Json request = read_json_file(request_path);
    if (verb->row != nullptr && request.is_object()) {
        // The rules an MCP call's arguments meet (verbs::RequestDef): a misspelt key, a wrong type
        // or a value out of range is refused here naming the request key, not later as a CLI flag.
        Json given = request;
        given.erase("json");  // the CLI's own flag, not a request key
        (void)verb->row->request.check_given(given);
    }
    std::vector<std::string> extra = request_words(*verb, request);
    const auto dashdash = std::find(extra.begin(), extra.end(), "--");
    std::vector<std::string> named(extra.begin(), dashdash);
    std::vector<std::string> positional(dashdash == extra.end() ? extra.end() : dashdash + 1,
                                        extra.end());
    std::vector<std::string> merged(words.begin(),
                                    words.begin() + static_cast<std::ptrdiff_t>(prefix));
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
    std::fprintf(stderr, "cko: error[%s]: %s\n", std::string(error_code_name(e.code())).c_str(),
                 e.what());
    if (json) {
        std::cout << printable_json(e.to_json()) << '\n';
    }
}

void add_common_flags(Verb& verb) {
    verb.app->add_flag("--json", verb.json, "Print one JSON document instead of the summary");
    verb.app->add_option("--request", verb.request_path,
                         "JSON object of this verb's options (keys are option names)");
}

void add_param_option(Verb& verb, const Param& p) {
    auto slot = std::make_unique<Slot>();
    slot->param = &p;
    const std::string name = p.positional ? p.key : verbs::cli_option_name(p.key);
    const Json& d = p.default_value;
    CLI::Option* opt = nullptr;
    switch (p.type) {
    case ParamType::string:
        slot->text = d.is_string() ? d.get<std::string>() : "";
        opt = verb.app->add_option(name, slot->text, p.help);
        break;
    case ParamType::integer:
        slot->integer = d.is_number() ? d.get<std::int64_t>() : 0;
        opt = verb.app->add_option(name, slot->integer, p.help);
        break;
    case ParamType::number:
        slot->number = d.is_number() ? d.get<double>() : 0;
        opt = verb.app->add_option(name, slot->number, p.help);
        break;
    case ParamType::boolean:
        opt = verb.app->add_flag(name, slot->flag, p.help);
        break;
    case ParamType::string_list:
        slot->list = d.is_array() ? d.get<std::vector<std::string>>() : std::vector<std::string>{};
        opt = verb.app->add_option(name, slot->list, p.help);
        if (p.positional) {
            opt->expected(-1);
        }
        break;
    }
    if (!d.is_null() && p.type != ParamType::string_list) {
        opt->capture_default_str();
    }
    if (p.required) {
        opt->required();
    }
    if (p.minimum && p.maximum) {
        opt->check(CLI::Range(*p.minimum, *p.maximum));
    } else if (p.minimum && p.exclusive_minimum && *p.minimum == 0) {
        opt->check(CLI::PositiveNumber);
    } else if (p.minimum) {
        opt->check(CLI::Range(*p.minimum, std::numeric_limits<double>::max()));
    }
    slot->option = opt;
    verb.slots.push_back(std::move(slot));
}

// The request of the parsed command line: every option given, by its key.
Json parsed_request(const Verb& verb) {
    Json request = Json::object();
    for (const auto& slot : verb.slots) {
        if (slot->option->count() == 0) {
            continue;
        }
        const std::string& key = slot->param->key;
        switch (slot->param->type) {
        case ParamType::string:
            request[key] = slot->text;
            break;
        case ParamType::integer:
            request[key] = slot->integer;
            break;
        case ParamType::number:
            request[key] = slot->number;
            break;
        case ParamType::boolean:
            request[key] = slot->flag;
            break;
        case ParamType::string_list:
            request[key] = slot->list;
            break;
        }
    }
    return request;
}

// The CLI11 app of a group or verb path, created (with the group's summary) when first needed.
CLI::App* app_at(CLI::App& root, const std::vector<std::string>& path) {
    CLI::App* current = &root;
    for (std::size_t i = 0; i < path.size(); ++i) {
        CLI::App* next = nullptr;
        for (CLI::App* sub : current->get_subcommands([](const CLI::App*) { return true; })) {
            if (sub->get_name() == path[i]) {
                next = sub;
            }
        }
        if (next == nullptr) {
            std::string summary;
            const std::vector<std::string> prefix(
                path.begin(), path.begin() + static_cast<std::ptrdiff_t>(i) + 1);
            for (const verbs::Group& g : verbs::verb_groups()) {
                if (g.path == prefix) {
                    summary = g.summary;
                }
            }
            next = current->add_subcommand(path[i], summary);
            if (i + 1 < path.size()) {
                next->require_subcommand(1);
            }
        }
        current = next;
    }
    return current;
}

mcp::ServerOptions& mcp_options() {
    static mcp::ServerOptions options;
    return options;
}

void build_app(CLI::App& app) {
    app.set_version_flag("--version", std::string("cko ") + build_version());
    app.require_subcommand(1);
    app.fallthrough(false);
    for (const verbs::Verb& row : verbs::verb_table()) {
        auto verb = std::make_unique<Verb>();
        const std::vector<std::string> parent(row.path.begin(), row.path.end() - 1);
        CLI::App* group = app_at(app, parent);
        verb->app = nullptr;
        for (CLI::App* sub : group->get_subcommands([](const CLI::App*) { return true; })) {
            if (sub->get_name() == row.path.back()) {
                verb->app = sub;  // a group made for an inner verb first (not the case today)
            }
        }
        if (verb->app == nullptr) {
            verb->app = group->add_subcommand(row.path.back(), row.summary);
        } else {
            verb->app->description(row.summary);
        }
        verb->row = &row;
        add_common_flags(*verb);
        for (const Param& p : row.request.params) {
            add_param_option(*verb, p);
        }
        verbs().push_back(std::move(verb));
    }
    // `cko mcp`: the MCP server over the same table (a shell, not an operation: it is no tool).
    auto mcp = std::make_unique<Verb>();
    mcp->app =
        app.add_subcommand("mcp", "Serve every verb as a Model Context Protocol tool over stdio");
    add_common_flags(*mcp);
    mcp_options() = mcp::ServerOptions{};
    const char* env = std::getenv("CKO_ROOT");
    mcp_options().root = env != nullptr && *env != '\0' ? env : "artifacts";
    mcp->app->add_flag("--read-only", mcp_options().read_only,
                       "Offer only the verbs that change nothing");
    mcp->app
        ->add_option("--max-message-bytes", mcp_options().max_message_bytes,
                     "Longest message (one line) read; a longer one is refused and discarded")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    mcp->app->add_option(
        "--root", mcp_options().root,
        "Default artifact root of every tool call (a call may name another), offered by "
        "resources/list (default $CKO_ROOT, else ./artifacts)");
    verbs().push_back(std::move(mcp));
}

}  // namespace

int run_cli(int argc, char** argv) {
    verbs().clear();
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
        if (verb->row == nullptr) {
            std::cout.flush();
            return mcp::serve_stdio(mcp_options());
        }
        verbs::Context context;
        context.want_text = !verb->json;
        context.want_document = verb->json;
        const bool show_progress = !verb->json && ::isatty(STDERR_FILENO) != 0;
        if (verb->row->cancellable) {
            context.cancel = verbs::signal_cancel_flag();
        }
        if (show_progress) {
            context.progress = [](const Progress& step) {
                std::fprintf(stderr, "\r\033[K%s", step.text().c_str());
                std::fflush(stderr);
            };
        }
        const verbs::Verb& row = *verb->row;
        verbs::Outcome result = verbs::run_operation(row, parsed_request(*verb), context, [&row] {
            if (row.cancellable) {
                verbs::install_signal_cancel();
            }
        });
        if (verb->json && result.write_document) {
            result.write_document(std::cout);
            std::cout << '\n';
        } else if (verb->json) {
            std::cout << printable_json(result.document) << '\n';
        } else {
            std::cout << result.text;
            if (!result.text.empty() && result.text.back() != '\n') {
                std::cout << '\n';
            }
        }
        std::cout.flush();
        if (result.failure) {  // the document (with --json) holds it too; the line says why
            print_error(*result.failure, false);
        }
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
