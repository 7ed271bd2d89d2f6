// SQLite access for the Nsight Systems importer; every missing table or column fails by name.
#include "cko/profile/nsys/nsys_database.hpp"

#include "cko/util/error.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <fstream>

namespace cko::profile::nsys {
namespace {

std::string uri_for(const std::filesystem::path& path) {
    // file: URI with percent-encoding of everything outside the unreserved set.
    std::string uri = "file:";
    for (const unsigned char c : std::filesystem::absolute(path).string()) {
        if (std::isalnum(c) != 0 || c == '/' || c == '-' || c == '_' || c == '.' || c == '~') {
            uri += static_cast<char>(c);
        } else {
            static constexpr char kHex[] = "0123456789ABCDEF";
            uri += '%';
            uri += kHex[c >> 4];
            uri += kHex[c & 15];
        }
    }
    return uri + "?mode=ro&immutable=1";
}

std::string quoted_identifier(std::string_view name) {
    std::string out = "\"";
    for (const char c : name) {
        out += c;
        if (c == '"') {
            out += '"';
        }
    }
    return out + "\"";
}

}  // namespace

const std::vector<std::string>& accepted_schema_versions() {
    static const std::vector<std::string> versions = {"3.20.3", "3.25.0"};
    return versions;
}

Statement::Statement(sqlite3* db, std::string_view sql) : db_(db), sql_(sql) {
    if (sqlite3_prepare_v2(db, sql_.c_str(), static_cast<int>(sql_.size()), &stmt_, nullptr) !=
        SQLITE_OK) {
        throw Error(ErrorCode::malformed_input,
                    std::string("nsys export: query failed: ") + sqlite3_errmsg(db),
                    {{"sql", sql_}});
    }
}

Statement::~Statement() {
    sqlite3_finalize(stmt_);
}

bool Statement::step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) {
        return true;
    }
    if (rc == SQLITE_DONE) {
        return false;
    }
    throw Error(ErrorCode::malformed_input,
                std::string("nsys export: reading failed: ") + sqlite3_errmsg(db_),
                {{"sql", sql_}});
}

void Statement::bind_int64(int index, std::int64_t value) {
    sqlite3_bind_int64(stmt_, index, value);
}

void Statement::bind_text(int index, std::string_view value) {
    sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
}

void Statement::reset() {
    sqlite3_reset(stmt_);
}

bool Statement::is_null(int column) const {
    return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

std::int64_t Statement::int64(int column) const {
    return sqlite3_column_int64(stmt_, column);
}

std::string Statement::text(int column) const {
    const auto* p = sqlite3_column_text(stmt_, column);
    return p == nullptr
               ? std::string()
               : std::string(reinterpret_cast<const char*>(p),
                             static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
}

NsysDatabase::NsysDatabase(const std::filesystem::path& path) : path_(path) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
        throw Error(ErrorCode::not_found, path.string() + " is not a readable file",
                    {{"path", path.string()}});
    }
    if (std::filesystem::file_size(path, ec) == 0) {
        throw Error(ErrorCode::empty_input, path.string() + " is empty", {{"path", path.string()}});
    }
    {
        char magic[16] = {};
        std::ifstream(path, std::ios::binary).read(magic, sizeof magic);
        if (std::string_view(magic, 15) != "SQLite format 3") {
            throw Error(ErrorCode::unsupported_format,
                        path.string() +
                            " is not an SQLite database (export the report with "
                            "`nsys export --type sqlite`; .nsys-rep is not read)",
                        {{"path", path.string()}});
        }
    }
    if (sqlite3_open_v2(uri_for(path).c_str(), &db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI,
                        nullptr) != SQLITE_OK) {
        const std::string why = db_ != nullptr ? sqlite3_errmsg(db_) : "out of memory";
        sqlite3_close(db_);
        db_ = nullptr;
        throw Error(ErrorCode::io_error, "cannot open " + path.string() + ": " + why,
                    {{"path", path.string()}});
    }
    try {
        Statement tables(db_, "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')");
        while (tables.step()) {
            tables_.insert(tables.text(0));
        }
        require_columns("META_DATA_EXPORT", {"name", "value"});
        Statement version(
            db_, "SELECT value FROM META_DATA_EXPORT WHERE name = 'EXPORT_SCHEMA_VERSION'");
        int rows = 0;
        while (version.step()) {
            schema_version_ = version.text(0);
            ++rows;
        }
        if (rows != 1) {
            throw Error(ErrorCode::missing_field,
                        path.string() +
                            ": META_DATA_EXPORT must hold exactly one "
                            "EXPORT_SCHEMA_VERSION row, found " +
                            std::to_string(rows),
                        {{"path", path.string()}, {"field", "EXPORT_SCHEMA_VERSION"}});
        }
        const auto& accepted = accepted_schema_versions();
        if (std::find(accepted.begin(), accepted.end(), schema_version_) == accepted.end()) {
            throw Error(ErrorCode::unsupported_format,
                        path.string() + " has export schema " + schema_version_ +
                            "; cko reads the schema versions it has fixtures for",
                        {{"path", path.string()},
                         {"schema_version", schema_version_},
                         {"accepted", accepted}});
        }
    } catch (...) {
        sqlite3_close(db_);
        db_ = nullptr;
        throw;
    }
}

NsysDatabase::~NsysDatabase() {
    string_lookup_.reset();
    sqlite3_close(db_);
}

std::string NsysDatabase::metadata(std::string_view name) const {
    Statement lookup(db_, "SELECT value FROM META_DATA_EXPORT WHERE name = ?1");
    lookup.bind_text(1, name);
    std::string value;
    while (lookup.step()) {
        value = lookup.text(0);
    }
    return value;
}

bool NsysDatabase::has_table(std::string_view table) const {
    return tables_.count(std::string(table)) != 0;
}

std::set<std::string> NsysDatabase::columns(std::string_view table) const {
    std::set<std::string> out;
    Statement info(db_, "PRAGMA table_info(" + quoted_identifier(table) + ")");
    while (info.step()) {
        out.insert(info.text(1));
    }
    return out;
}

bool NsysDatabase::has_column(std::string_view table, std::string_view column) const {
    return has_table(table) && columns(table).count(std::string(column)) != 0;
}

void NsysDatabase::require_columns(std::string_view table,
                                   const std::vector<std::string>& required) const {
    if (!has_table(table)) {
        throw Error(ErrorCode::missing_field,
                    path_.string() + " lacks the table " + std::string(table),
                    {{"path", path_.string()}, {"table", std::string(table)}});
    }
    const std::set<std::string> present = columns(table);
    std::vector<std::string> missing;
    for (const auto& c : required) {
        if (present.count(c) == 0) {
            missing.push_back(c);
        }
    }
    if (!missing.empty()) {
        std::string list;
        for (const auto& c : missing) {
            list += (list.empty() ? "" : ", ") + c;
        }
        throw Error(
            ErrorCode::missing_field,
            path_.string() + ": table " + std::string(table) + " lacks column(s) " + list,
            {{"path", path_.string()}, {"table", std::string(table)}, {"columns", missing}});
    }
}

std::optional<std::string> NsysDatabase::string_id(std::int64_t id) const {
    if (!string_lookup_) {
        string_lookup_ =
            std::make_unique<Statement>(db_, "SELECT value FROM StringIds WHERE id = ?1");
    }
    string_lookup_->reset();
    string_lookup_->bind_int64(1, id);
    if (!string_lookup_->step()) {
        return std::nullopt;
    }
    return string_lookup_->text(0);
}

}  // namespace cko::profile::nsys
