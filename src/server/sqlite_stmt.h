// The SQLite helpers of ObjectStore's source files (internal to server/).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <unordered_map>

#include "core/status.h"

namespace muster::server::sqlite {

// Statements prepared once and reused: parsing the SQL of a create's statements
// (BEGIN, the row, the change log, the rv, COMMIT) again for every write was a fifth
// of the API's CPU under load. Not thread-safe: the store's write lock guards it.
// Clear() (finalize them all) before the database is closed.
class StmtCache {
 public:
  explicit StmtCache(sqlite3* db) : db_(db) {}
  ~StmtCache() { Clear(); }
  StmtCache(const StmtCache&) = delete;
  StmtCache& operator=(const StmtCache&) = delete;
  void Clear() {
    for (auto& [sql, entry] : stmts_) sqlite3_finalize(entry.stmt);
    stmts_.clear();
  }

 private:
  friend class Stmt;
  struct Entry {
    sqlite3_stmt* stmt = nullptr;
    bool in_use = false;
  };
  sqlite3* db_;
  std::unordered_map<std::string, Entry> stmts_;  // by SQL text
};

// A prepared statement that finalizes itself, so early returns cannot leak one; or,
// taken from a StmtCache, one that is reset and handed back to it.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) { rc_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr); }
  // A statement in use further up this thread's stack (a read inside a mutator) is
  // not shared: this one is then prepared afresh.
  Stmt(StmtCache& cache, const char* sql) {
    auto [it, added] = cache.stmts_.try_emplace(sql);
    StmtCache::Entry& entry = it->second;
    if (added) {
      rc_ = sqlite3_prepare_v3(cache.db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &entry.stmt, nullptr);
      if (rc_ != SQLITE_OK) {
        sqlite3_finalize(entry.stmt);
        cache.stmts_.erase(it);
        return;
      }
    }
    if (entry.in_use) {
      rc_ = sqlite3_prepare_v2(cache.db_, sql, -1, &stmt_, nullptr);
      return;
    }
    entry.in_use = true;
    stmt_ = entry.stmt;
    cached_ = &entry;
    rc_ = SQLITE_OK;
  }
  ~Stmt() {
    if (cached_ == nullptr) {
      sqlite3_finalize(stmt_);
      return;
    }
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
    cached_->in_use = false;
  }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  bool ok() const { return rc_ == SQLITE_OK; }
  void Bind(int i, const std::string& s) {
    sqlite3_bind_text(stmt_, i, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
  }
  void Bind(int i, int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  int Step() { return sqlite3_step(stmt_); }
  std::string Text(int col) const {
    const auto* p = sqlite3_column_text(stmt_, col);
    return p ? std::string(reinterpret_cast<const char*>(p),
                           static_cast<size_t>(sqlite3_column_bytes(stmt_, col)))
             : std::string();
  }
  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }

 private:
  sqlite3_stmt* stmt_ = nullptr;
  StmtCache::Entry* cached_ = nullptr;
  int rc_;
};

inline Status Exec(sqlite3* db, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errmsg(db);
    sqlite3_free(err);
    return Status(StatusCode::kUnavailable, std::string("sqlite: ") + msg + " (" + sql + ")");
  }
  return Status::Ok();
}

// One statement without rows (BEGIN, COMMIT, ROLLBACK), from the cache.
inline Status Exec(StmtCache& cache, sqlite3* db, const char* sql) {
  Stmt stmt(cache, sql);
  if (!stmt.ok() || stmt.Step() != SQLITE_DONE) {
    return Status(StatusCode::kUnavailable,
                  std::string("sqlite: ") + sqlite3_errmsg(db) + " (" + sql + ")");
  }
  return Status::Ok();
}

// The store's resourceVersion: meta's, or the change log's newest when newer (a
// write logs its change without updating meta; see ObjectStore::CommitLocked).
inline constexpr char kStoreRvQuery[] =
    "SELECT max((SELECT value FROM meta WHERE key = 'rv'), "
    "coalesce((SELECT max(rv) FROM events), 0))";

inline Status SqliteError(sqlite3* db, const std::string& what) {
  return Status(StatusCode::kUnavailable, "sqlite: " + what + ": " + sqlite3_errmsg(db));
}

}  // namespace muster::server::sqlite
