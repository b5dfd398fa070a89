// ObjectStore's operational side: write health for /readyz, and snapshots (save
// online, restore offline) for backups.
#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "server/object_store.h"
#include "server/sqlite_stmt.h"

namespace muster::server {
namespace {

// The probe's row: large enough to need fresh pages (a full disk refuses it), small
// enough that one every few seconds costs nothing.
constexpr int kProbeBytes = 16 << 10;

Status Sql(sqlite3* db, const std::string& sql, const std::string& what) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) == SQLITE_OK) return Status::Ok();
  std::string msg = err ? err : sqlite3_errmsg(db);
  sqlite3_free(err);
  return Status(StatusCode::kUnavailable, "sqlite: " + what + ": " + msg);
}

// One integer from a one-row query; nullopt when the query fails or has no row.
std::optional<int64_t> QueryInt(sqlite3* db, const char* sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr) != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return std::nullopt;
  }
  std::optional<int64_t> out;
  if (sqlite3_step(stmt) == SQLITE_ROW) out = sqlite3_column_int64(stmt, 0);
  sqlite3_finalize(stmt);
  return out;
}

Status FsyncPath(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status(StatusCode::kUnavailable, "cannot open " + path + " to sync it");
  const int rc = fsync(fd);
  close(fd);
  if (rc != 0) return Status(StatusCode::kUnavailable, "cannot sync " + path);
  return Status::Ok();
}

}  // namespace

void ObjectStore::NoteWrite(const Status& outcome) {
  std::lock_guard<std::mutex> lock(health_mu_);
  health_.writable = outcome.ok();
  health_.reason = outcome.ok() ? std::string() : outcome.message();
  if (outcome.ok()) health_.last_write = std::chrono::steady_clock::now();
}

WriteHealth ObjectStore::write_health() const {
  std::lock_guard<std::mutex> lock(health_mu_);
  return health_;
}

Status ObjectStore::ProbeWritable() {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (batch_depth_ > 0) return Status::Ok();  // a batch is writing: its commit will tell
  Status s = Sql(db_, "BEGIN IMMEDIATE", "probe");
  if (s.ok()) {
    s = Sql(db_,
            "INSERT OR REPLACE INTO probe VALUES (1, zeroblob(" + std::to_string(kProbeBytes) +
                ")); DELETE FROM probe;",
            "probe write");
    if (s.ok()) {
      s = Sql(db_, "COMMIT", "probe commit");
    }
    if (!s.ok()) Sql(db_, "ROLLBACK", "probe rollback");
  }
  NoteWrite(s);
  return s;
}

Result<int64_t> ObjectStore::SaveSnapshot(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    return Status(StatusCode::kAlreadyExists,
                  path + " exists: a snapshot is written to a new file");
  }
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (batch_depth_ > 0) {
    return Status(StatusCode::kFailedPrecondition, "a snapshot cannot be taken inside a batch");
  }
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db_, "VACUUM INTO ?", -1, &stmt, nullptr) != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return Status(StatusCode::kUnavailable,
                  std::string("sqlite: prepare snapshot: ") + sqlite3_errmsg(db_));
  }
  sqlite3_bind_text(stmt, 1, path.c_str(), -1, SQLITE_TRANSIENT);
  const int rc = sqlite3_step(stmt);
  sqlite3_finalize(stmt);
  if (rc != SQLITE_DONE) {
    Status s(StatusCode::kUnavailable,
             "sqlite: snapshot into " + path + ": " + sqlite3_errmsg(db_));
    std::filesystem::remove(path, ec);
    return s;
  }
  // It holds every object, Secrets included: readable by its owner only.
  std::filesystem::permissions(
      path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
      std::filesystem::perm_options::replace, ec);
  if (Status s = FsyncPath(path); !s.ok()) return s;
  return rv_;
}

Result<int64_t> ObjectStore::RestoreSnapshot(const std::string& snapshot, const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path target = fs::path(dir) / "muster.db";
  if (fs::exists(target, ec) || fs::exists(fs::path(dir) / "store-created", ec)) {
    return Status(StatusCode::kFailedPrecondition,
                  dir +
                      " already has a store: restore into a new data directory (a restore "
                      "over a store would fork its history), then start muster serve on it");
  }
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(snapshot.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return Status(StatusCode::kInvalidArgument, "cannot open " + snapshot + ": " + msg);
  }
  std::string problem;
  {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &stmt, nullptr) != SQLITE_OK) {
      problem = std::string("not an SQLite database (") + sqlite3_errmsg(db) + ")";
    } else {
      while (sqlite3_step(stmt) == SQLITE_ROW) {
        const auto* text = sqlite3_column_text(stmt, 0);
        const std::string line = text ? reinterpret_cast<const char*>(text) : "";
        if (line != "ok" && problem.empty()) problem = "damaged: " + line;
      }
    }
    sqlite3_finalize(stmt);
  }
  std::optional<int64_t> rv;
  if (problem.empty()) {
    rv = QueryInt(db, "SELECT value FROM meta WHERE key = 'rv'");
    if (!rv || !QueryInt(db, "SELECT count(*) FROM objects")) {
      problem = "not a muster store (no meta and objects tables)";
    } else {
      rv = QueryInt(db, sqlite::kStoreRvQuery);
    }
  }
  sqlite3_close(db);
  if (!problem.empty()) {
    return Status(StatusCode::kInvalidArgument, snapshot + ": " + problem);
  }
  fs::create_directories(dir, ec);
  if (ec) return Status(StatusCode::kUnavailable, "cannot create " + dir + ": " + ec.message());
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace, ec);
  // Copy, sync, then rename: a crash leaves either no store or the whole snapshot.
  const fs::path partial = fs::path(dir) / "muster.db.restoring";
  fs::copy_file(snapshot, partial, fs::copy_options::overwrite_existing, ec);
  if (ec) return Status(StatusCode::kUnavailable, "cannot copy " + snapshot + ": " + ec.message());
  fs::permissions(partial, fs::perms::owner_read | fs::perms::owner_write,
                  fs::perm_options::replace, ec);
  if (Status s = FsyncPath(partial.string()); !s.ok()) return s;
  fs::rename(partial, target, ec);
  if (ec) return Status(StatusCode::kUnavailable, "cannot rename into " + target.string());
  if (Status s = FsyncPath(dir); !s.ok()) return s;
  return *rv;
}

}  // namespace muster::server
