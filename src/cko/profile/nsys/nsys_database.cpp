// SQLite access for the Nsight Systems importer; every missing or mistyped table or column fails by
// name.
#include "cko/profile/nsys/nsys_database.hpp"

#include "cko/util/error.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>

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

// SQLite's affinity of a declared type (https://sqlite.org/datatype3.html, 3.1), as cko needs it.
std::optional<ColumnType> affinity(std::string declared) {
    for (char& c : declared) {
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    if (declared.find("INT") != std::string::npos) {
        return ColumnType::integer;
    }
    if (declared.find("CHAR") != std::string::npos || declared.find("CLOB") != std::string::npos ||
        declared.find("TEXT") != std::string::npos) {
        return ColumnType::text;
    }
    return std::nullopt;
}

std::string_view type_name(ColumnType t) {
    return t == ColumnType::integer ? "INTEGER" : "TEXT";
}

// "3.24.14" → 3; nullopt when the text does not start with digits.
std::optional<int> major_version(std::string_view version) {
    int major = 0;
    std::size_t i = 0;
    while (i < version.size() && i < 6 && version[i] >= '0' && version[i] <= '9') {
        major = major * 10 + (version[i] - '0');
        ++i;
    }
    return i == 0 ? std::nullopt : std::optional<int>(major);
}

}  // namespace

const std::vector<std::string>& schema_versions_with_fixtures() {
    static const std::vector<std::string> versions = {"3.1.7", "3.20.3", "3.24.14", "3.25.0"};
    return versions;
}

Statement::Statement(sqlite3* db, std::string_view sql, Utf8Repairs* repairs)
    : db_(db), sql_(sql), repairs_(repairs) {
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
    std::string out =
        p == nullptr ? std::string()
                     : std::string(reinterpret_cast<const char*>(p),
                                   static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
    if (repairs_ != nullptr) {
        repairs_->repair(out);
    } else {
        repair_utf8_in_place(out);
    }
    return out;
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
        // Nsight Systems 2023.2 (schema 3.1.7) still names the table EXPORT_META_DATA; so did
        // the 2.x exports. The table's name says nothing of the layout: the version does.
        if (!has_table("META_DATA_EXPORT") && has_table("EXPORT_META_DATA")) {
            metadata_table_ = "EXPORT_META_DATA";
        }
        require_columns(metadata_table_, {"name", "value"});
        Statement version(
            db_, "SELECT value FROM " + metadata_table_ + " WHERE name = 'EXPORT_SCHEMA_VERSION'");
        int rows = 0;
        while (version.step()) {
            schema_version_ = version.text(0);
            ++rows;
        }
        if (rows != 1) {
            throw Error(ErrorCode::missing_field,
                        path.string() + ": " + metadata_table_ +
                            " must hold exactly one EXPORT_SCHEMA_VERSION row, found " +
                            std::to_string(rows) +
                            "; export the .nsys-rep again with `nsys export --type sqlite`",
                        {{"path", path.string()},
                         {"table", metadata_table_},
                         {"field", "EXPORT_SCHEMA_VERSION"}});
        }
        // Compatibility is probed table by table (require_columns); the version is identity.
        // Only another major version is refused up front: its layout is not this one.
        if (major_version(schema_version_) != 3) {
            throw Error(ErrorCode::unsupported_format,
                        path.string() + " has export schema " + schema_version_ + " (" +
                            metadata_table_ +
                            ".EXPORT_SCHEMA_VERSION); cko reads schema 3.x exports, whose "
                            "tables it probes column by column: re-export the .nsys-rep with an "
                            "Nsight Systems that writes 3.x (2023.2 writes 3.1.7) with `nsys "
                            "export --type sqlite`",
                        {{"path", path.string()},
                         {"table", metadata_table_},
                         {"field", "EXPORT_SCHEMA_VERSION"},
                         {"schema_version", schema_version_},
                         {"with_fixtures", schema_versions_with_fixtures()}});
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
    Statement lookup(db_, "SELECT value FROM " + metadata_table_ + " WHERE name = ?1", &repairs_);
    lookup.bind_text(1, name);
    std::string value;
    while (lookup.step()) {
        value = lookup.text(0);
    }
    return value;
}

ColumnType NsysDatabase::expected_type(std::string_view column) noexcept {
    return column == "value" || column == "name" || column == "label" || column == "text"
               ? ColumnType::text
               : ColumnType::integer;
}

std::vector<std::pair<std::string, std::int64_t>> NsysDatabase::unmodeled_gpu_rows() const {
    static constexpr std::string_view kPrefix = "CUPTI_ACTIVITY_KIND_";
    std::vector<std::pair<std::string, std::int64_t>> out;
    for (const auto& table : tables_) {
        if (!table.starts_with(kPrefix)) {
            continue;
        }
        const std::string_view kind = std::string_view(table).substr(kPrefix.size());
        if (kind == "KERNEL" || kind == "MEMCPY" || kind == "MEMSET") {
            continue;
        }
        const bool gpu_work = kind.find("KERNEL") != std::string_view::npos ||
                              kind.find("MEMCPY") != std::string_view::npos ||
                              kind.find("MEMSET") != std::string_view::npos ||
                              kind.find("GRAPH_TRACE") != std::string_view::npos;
        if (!gpu_work) {
            continue;
        }
        Statement count(db_, "SELECT count(*) FROM " + quoted_identifier(table));
        if (count.step() && count.int64(0) > 0) {
            out.emplace_back(table, count.int64(0));
        }
    }
    return out;
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
    std::map<std::string, std::string> declared;  // column → declared type
    {
        Statement info(db_, "PRAGMA table_info(" + quoted_identifier(table) + ")", &repairs_);
        while (info.step()) {
            declared.emplace(info.text(1), info.text(2));
        }
    }
    std::vector<std::string> missing;
    for (const auto& c : required) {
        const auto it = declared.find(c);
        if (it == declared.end()) {
            missing.push_back(c);
            continue;
        }
        const ColumnType want = expected_type(c);
        if (affinity(it->second) != want) {
            throw Error(ErrorCode::unsupported_format,
                        path_.string() + ": column " + std::string(table) + "." + c +
                            " is declared '" + it->second + "'; cko reads it as " +
                            std::string(type_name(want)) +
                            " (an export whose layout differs from Nsight Systems' own?)",
                        {{"path", path_.string()},
                         {"table", std::string(table)},
                         {"column", c},
                         {"declared_type", it->second},
                         {"expected_type", type_name(want)}});
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
        string_lookup_ = std::make_unique<Statement>(
            db_, "SELECT value FROM StringIds WHERE id = ?1", &repairs_);
    }
    string_lookup_->reset();
    string_lookup_->bind_int64(1, id);
    if (!string_lookup_->step()) {
        return std::nullopt;
    }
    return string_lookup_->text(0);
}

}  // namespace cko::profile::nsys
