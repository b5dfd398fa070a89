#include "server/object_store.h"

#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include "server/graceful_deletion.h"
#include "server/sqlite_stmt.h"

namespace muster::server {
namespace {

using nlohmann::json;
using sqlite::Exec;
using sqlite::kStoreRvQuery;
using sqlite::SqliteError;
using sqlite::Stmt;
using sqlite::StmtCache;

control::ChangeType ParseChangeType(const std::string& s) {
  if (s == "ADDED") return control::ChangeType::kAdded;
  if (s == "DELETED") return control::ChangeType::kDeleted;
  return control::ChangeType::kModified;
}

// Everything outside metadata and status: what metadata.generation counts.
json SpecPart(const json& object) {
  json out = json::object();
  if (!object.is_object()) return out;
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (it.key() != "metadata" && it.key() != "status") out[it.key()] = it.value();
  }
  return out;
}

json& Metadata(json& object) {
  if (!object.contains("metadata") || !object["metadata"].is_object()) {
    object["metadata"] = json::object();
  }
  return object["metadata"];
}

}  // namespace

std::optional<int64_t> ParseResourceVersion(const json& object) {
  if (!object.is_object() || !object.contains("metadata") || !object["metadata"].is_object()) {
    return std::nullopt;
  }
  const json& md = object["metadata"];
  if (!md.contains("resourceVersion") || md["resourceVersion"].is_null()) return std::nullopt;
  const json& rv = md["resourceVersion"];
  if (!rv.is_string()) return -1;
  const std::string& s = rv.get_ref<const std::string&>();
  if (s.empty()) return std::nullopt;
  if (s.size() > 18) return -1;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

ObjectStore::ObjectStore(sqlite3* db, StoreOptions options)
    : db_(db),
      stmts_(std::make_unique<StmtCache>(db)),
      options_(std::move(options)),
      rng_(std::random_device{}()),
      hub_(options_.event_retention) {}

ObjectStore::~ObjectStore() {
  hub_.Close();
  stmts_.reset();  // a statement left unfinalized keeps the database open
  sqlite3_close(db_);
}

Result<std::unique_ptr<ObjectStore>> ObjectStore::Open(const std::string& dir,
                                                       StoreOptions options) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status(StatusCode::kUnavailable, "cannot create " + dir + ": " + ec.message());
  std::string path = (std::filesystem::path(dir) / "muster.db").string();
  const std::filesystem::path marker = std::filesystem::path(dir) / "store-created";
  if (std::filesystem::exists(marker) &&
      (!std::filesystem::exists(path) || std::filesystem::file_size(path, ec) == 0)) {
    return Status(StatusCode::kFailedPrecondition,
                  path + " is missing or empty, but this data directory had a store (" +
                      marker.string() +
                      " exists): refusing to start as an empty cluster; restore the "
                      "database, or remove the data directory to start afresh");
  }
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return Status(StatusCode::kUnavailable, "cannot open " + path + ": " + msg);
  }
  std::unique_ptr<ObjectStore> store(new ObjectStore(db, std::move(options)));
  if (Status s = store->Init(); !s.ok()) return s;
  if (!std::filesystem::exists(marker)) {
    std::ofstream(marker) << "muster serve's store: " << path << "\n";
  }
  return store;
}

Status ObjectStore::Init() {
  // WAL + synchronous=FULL: a commit is on disk (WAL fsynced) when sqlite3_step
  // returns, which is what "acknowledged means durable" needs. EXCLUSIVE locking
  // keeps a second server off the same data directory.
  for (const char* sql : {
           "PRAGMA journal_mode=WAL;",
           "PRAGMA synchronous=FULL;",
           "PRAGMA locking_mode=EXCLUSIVE;",
           "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);",
           // An object's body is its last change's (events.rv = objects.rv): written
           // once per write, not twice. Stores made before that are migrated
           // (MigrateObjectBodies).
           "CREATE TABLE IF NOT EXISTS objects (resource TEXT NOT NULL, namespace TEXT NOT NULL,"
           " name TEXT NOT NULL, rv INTEGER NOT NULL,"
           " PRIMARY KEY (resource, namespace, name)) WITHOUT ROWID;",
           "CREATE TABLE IF NOT EXISTS events (rv INTEGER PRIMARY KEY, type TEXT NOT NULL,"
           " resource TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL,"
           " body TEXT NOT NULL);",
           "CREATE TABLE IF NOT EXISTS probe (id INTEGER PRIMARY KEY, filler BLOB);",
           "BEGIN IMMEDIATE; INSERT OR IGNORE INTO meta VALUES ('rv', 0); COMMIT;",
       }) {
    if (Status s = Exec(db_, sql); !s.ok()) {
      if (s.message().find("locked") != std::string::npos) {
        return Status(StatusCode::kUnavailable,
                      "the data directory is in use by another muster serve");
      }
      return s;
    }
  }
  {
    // Damage SQLite can see (torn or overwritten pages): refuse to start.
    Stmt check(db_, "PRAGMA quick_check");
    if (!check.ok()) return SqliteError(db_, "check the store");
    std::string problems;
    int rows = 0;
    while (check.Step() == SQLITE_ROW) {
      const std::string line = check.Text(0);
      if (line == "ok") continue;
      if (++rows <= 5) problems += (problems.empty() ? "" : "; ") + line;
    }
    if (rows > 0) {
      return Status(StatusCode::kFailedPrecondition,
                    "the store is damaged (" + std::to_string(rows) +
                        " problems found by SQLite's quick_check: " + problems +
                        "); restore a backup, or move the data directory aside");
    }
  }
  if (options_.max_page_count > 0) {
    const std::string pragma =
        "PRAGMA max_page_count=" + std::to_string(options_.max_page_count) + ";";
    if (Status s = Exec(db_, pragma.c_str()); !s.ok()) return s;
  }
  if (Status s = MigrateObjectBodies(); !s.ok()) return s;
  if (Status s = LoadStoredObjects(); !s.ok()) return s;
  {
    // A write logs its change but leaves meta alone (one statement fewer); meta is
    // set when the log is pruned, so the newer of the two is the store's rv.
    Stmt q(db_, kStoreRvQuery);
    if (!q.ok() || q.Step() != SQLITE_ROW) return SqliteError(db_, "read resourceVersion");
    rv_ = q.Int(0);
  }
  {
    std::unique_lock<std::shared_mutex> texts(texts_mu_);
    texts_rv_ = rv_;
  }
  std::vector<control::Change> history;
  Stmt q(db_,
         "SELECT rv, type, resource, namespace, name, body FROM events WHERE rv > ? ORDER BY rv");
  if (!q.ok()) return SqliteError(db_, "read events");
  q.Bind(1, rv_ - static_cast<int64_t>(options_.event_retention));
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    control::Change c;
    c.resource_version = q.Int(0);
    c.type = ParseChangeType(q.Text(1));
    c.resource = q.Text(2);
    c.namespace_ = q.Text(3);
    c.name = q.Text(4);
    c.SetObject(json::parse(q.Text(5), nullptr, false));
    history.push_back(std::move(c));
  }
  if (rc != SQLITE_DONE) return SqliteError(db_, "read events");
  hub_.Reset(rv_, std::move(history));
  return Status::Ok();
}

std::string ObjectStore::Now() const {
  if (options_.now) return options_.now();
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string ObjectStore::DrawUid() { return NewUid(); }

std::string ObjectStore::NewUid() {
  // RFC 4122 version 4.
  uint64_t a = 0, b = 0;
  {
    std::lock_guard<std::mutex> lock(rng_mu_);
    a = rng_();
    b = rng_();
  }
  a = (a & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;
  b = (b & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(a >> 32),
                static_cast<unsigned>((a >> 16) & 0xffff), static_cast<unsigned>(a & 0xffff),
                static_cast<unsigned>(b >> 48),
                static_cast<unsigned long long>(b & 0xffffffffffffULL));
  return buf;
}

Result<int64_t> ObjectStore::CommitLocked(const control::ObjectKey& key, control::ChangeType type,
                                          json& object, WriteExtras* extras) {
  // Inside a Batch the transaction is the batch's: no BEGIN/COMMIT here, and a
  // failure poisons the batch, which rolls back as a whole.
  const bool in_batch = batch_depth_ > 0;
  if (in_batch && !batch_error_.ok()) return batch_error_;
  const int64_t rv = rv_ + 1;
  // A deleted object carries the deletion's resourceVersion, as upstream does.
  Metadata(object)["resourceVersion"] = std::to_string(rv);
  const std::string body = object.dump();
  if (!in_batch) {
    if (Status s = Exec(*stmts_, db_, "BEGIN IMMEDIATE"); !s.ok()) {
      NoteWrite(s);
      return s;
    }
  }
  auto fail = [&](const char* what) {
    Status s = SqliteError(db_, what);
    if (in_batch) {
      batch_error_ = s;
    } else {
      Exec(*stmts_, db_, "ROLLBACK");
      NoteWrite(s);
    }
    return s;
  };
  {
    // A create inserts (the primary key refuses a taken name: no read first); an
    // update points the row at its new change; a delete removes it.
    Stmt w(*stmts_, type == control::ChangeType::kDeleted
                        ? "DELETE FROM objects WHERE resource = ? AND namespace = ? AND name = ?"
                    : type == control::ChangeType::kAdded
                        ? "INSERT INTO objects (resource, namespace, name, rv) VALUES (?, ?, ?, ?)"
                        : "INSERT OR REPLACE INTO objects (resource, namespace, name, rv) "
                          "VALUES (?, ?, ?, ?)");
    if (!w.ok()) return fail("prepare write");
    w.Bind(1, key.resource);
    w.Bind(2, key.namespace_);
    w.Bind(3, key.name);
    if (type != control::ChangeType::kDeleted) w.Bind(4, rv);
    const int rc = w.Step();
    if ((rc & 0xff) == SQLITE_CONSTRAINT && type == control::ChangeType::kAdded) {
      // Only this statement was undone: the transaction (a batch's) goes on.
      if (!in_batch) Exec(*stmts_, db_, "ROLLBACK");
      return AlreadyExists(key.name);
    }
    if (rc != SQLITE_DONE) return fail("write object");
  }
  {
    // The one copy of the body: the object's (objects.rv) and the watch history's.
    Stmt e(*stmts_,
           "INSERT INTO events (rv, type, resource, namespace, name, body) "
           "VALUES (?, ?, ?, ?, ?, ?)");
    if (!e.ok()) return fail("prepare event");
    e.Bind(1, rv);
    e.Bind(2, std::string(control::ChangeTypeName(type)));
    e.Bind(3, key.resource);
    e.Bind(4, key.namespace_);
    e.Bind(5, key.name);
    e.Bind(6, body);
    if (e.Step() != SQLITE_DONE) return fail("write event");
  }
  // Prune the change log now and then rather than per write; a change that is still
  // an object's body stays. meta keeps the rv, which the log may no longer show.
  if (++writes_since_prune_ >= 1000) {
    writes_since_prune_ = 0;
    Stmt m(*stmts_, "UPDATE meta SET value = ? WHERE key = 'rv'");
    if (!m.ok()) return fail("prepare rv");
    m.Bind(1, rv);
    if (m.Step() != SQLITE_DONE) return fail("write rv");
    Stmt p(*stmts_, "DELETE FROM events WHERE rv <= ? AND rv NOT IN (SELECT rv FROM objects)");
    if (!p.ok()) return fail("prepare prune");
    p.Bind(1, rv - static_cast<int64_t>(options_.event_retention));
    if (p.Step() != SQLITE_DONE) return fail("prune events");
  }
  if (!in_batch && !Exec(*stmts_, db_, "COMMIT").ok()) return fail("commit");
  if (!in_batch) {
    NoteWrite(Status::Ok());
    ++commits_;
  }
  ObjectTextCache::Entry text;
  if (type != control::ChangeType::kDeleted) {
    text = std::make_shared<const StoredText>(
        StoredText{body, object.value("apiVersion", ""), object.value("kind", "")});
  }
  rv_ = rv;
  if (extras != nullptr) extras->text = text;
  if (in_batch) {
    batch_texts_.emplace_back(key, std::move(text));
  } else {
    PublishText(key, std::move(text));
  }
  control::Change change;
  change.resource_version = rv;
  change.type = type;
  change.resource = key.resource;
  change.namespace_ = key.namespace_;
  change.name = key.name;
  // One object of this version for every reader of the change (reads use the text).
  change.SetObject(object);
  if (extras != nullptr) change.decoded = extras->decoded;
  if (in_batch) {
    batch_changes_.push_back(std::move(change));
  } else {
    hub_.Publish(std::move(change));
  }
  return rv;
}

Status ObjectStore::Batch(const std::function<void()>& writes) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (batch_depth_ > 0) {
    writes();
    return batch_error_;
  }
  if (Status s = Exec(*stmts_, db_, "BEGIN IMMEDIATE"); !s.ok()) {
    NoteWrite(s);
    return s;
  }
  const int64_t rv_before = rv_;
  const int64_t prune_before = writes_since_prune_;
  batch_depth_ = 1;
  batch_owner_ = std::this_thread::get_id();
  batch_error_ = Status::Ok();
  batch_changes_.clear();
  batch_texts_.clear();
  auto roll_back = [&] {
    Exec(*stmts_, db_, "ROLLBACK");
    rv_ = rv_before;
    writes_since_prune_ = prune_before;
    batch_changes_.clear();
    batch_texts_.clear();
  };
  try {
    writes();
  } catch (...) {
    batch_depth_ = 0;
    batch_owner_ = std::thread::id();
    roll_back();
    throw;
  }
  batch_depth_ = 0;
  batch_owner_ = std::thread::id();
  Status result = batch_error_;
  if (result.ok() && options_.batch_fault) result = options_.batch_fault();
  if (result.ok() && !Exec(*stmts_, db_, "COMMIT").ok()) result = SqliteError(db_, "commit");
  NoteWrite(result);
  if (!result.ok()) {
    roll_back();
    return result;
  }
  ++commits_;
  {
    std::unique_lock<std::shared_mutex> texts(texts_mu_);
    for (auto& [key, text] : batch_texts_) {
      if (text) {
        texts_.Put(key, std::move(text));
      } else {
        texts_.Erase(key);
      }
    }
    texts_rv_ = rv_;
  }
  batch_texts_.clear();
  for (auto& change : batch_changes_) hub_.Publish(std::move(change));
  batch_changes_.clear();
  return Status::Ok();
}

struct ObjectStore::GroupedWrite {
  const std::function<Result<json>()>* write = nullptr;
  std::optional<Result<json>> result;
  // Its thread waits on its own condition: a commit wakes each writer of the group
  // once, and the first of the next group to lead it, instead of every waiting
  // thread contending for group_mu_ after each commit.
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;  // result is set (guarded by mu)
  bool lead = false;  // this write's thread leads the next group (guarded by mu)
};

void ObjectStore::YieldToWriters(std::chrono::milliseconds limit) {
  std::unique_lock<std::mutex> queue(group_mu_);
  // A leader is set from a write's arrival until its group has committed.
  if (!group_leader_) return;
  const uint64_t seen = groups_done_;
  group_done_cv_.wait_for(queue, limit, [&] { return groups_done_ != seen; });
}

size_t ObjectStore::queued_writes() {
  std::lock_guard<std::mutex> lock(group_mu_);
  return group_queue_.size();
}

Result<json> ObjectStore::Grouped(const std::function<Result<json>()>& write) {
  grouped_writes_.fetch_add(1, std::memory_order_relaxed);
  GroupedWrite mine;
  mine.write = &write;
  {
    std::unique_lock<std::mutex> queue(group_mu_);
    group_queue_.push_back(&mine);
    if (group_leader_) {
      queue.unlock();
      std::unique_lock<std::mutex> wait(mine.mu);
      mine.cv.wait(wait, [&] { return mine.done || mine.lead; });
      if (mine.done) return std::move(*mine.result);
      // Handed the lead: group_leader_ stayed set for this thread.
    } else {
      group_leader_ = true;
    }
  }
  std::vector<GroupedWrite*> group;
  {
    std::lock_guard<std::mutex> queue(group_mu_);
    group.swap(group_queue_);
  }
  Status committed;
  try {
    committed = Batch([&] {
      for (GroupedWrite* w : group) {
        // One write's exception is its own failure, never the group's.
        try {
          w->result = (*w->write)();
        } catch (const std::exception& e) {
          w->result = Internal(std::string("store write: ") + e.what());
        }
      }
    });
  } catch (const std::exception& e) {
    // Never a leader that leaves the others waiting for ever.
    committed = Internal(std::string("store commit: ") + e.what());
  }
  for (GroupedWrite* w : group) {
    if (!w->result || (!committed.ok() && w->result->ok())) w->result = committed;
  }
  // Notified under the writer's own mutex: once it sees done it returns and its
  // GroupedWrite is gone.
  for (GroupedWrite* w : group) {
    if (w == &mine) continue;
    std::lock_guard<std::mutex> wake(w->mu);
    w->done = true;
    w->cv.notify_one();
  }
  {
    // Writes queued meanwhile: the first of them leads them (it takes the queue).
    std::lock_guard<std::mutex> queue(group_mu_);
    ++groups_done_;
    group_done_cv_.notify_all();
    if (group_queue_.empty()) {
      group_leader_ = false;
    } else {
      GroupedWrite* next = group_queue_.front();
      std::lock_guard<std::mutex> wake(next->mu);
      next->lead = true;
      next->cv.notify_one();
    }
  }
  return std::move(*mine.result);
}

Result<json> ObjectStore::Create(const control::ObjectKey& key, json object, WriteExtras* extras) {
  if (!object.is_object()) return InvalidArgument("object must be a JSON object");
  if (InBatchOnThisThread()) return CreateNow(key, std::move(object), extras);
  return Grouped([&]() { return CreateNow(key, std::move(object), extras); });
}

Result<json> ObjectStore::CreateNow(const control::ObjectKey& key, json object,
                                    WriteExtras* extras) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  // Whether the name is taken is the insert's to say (CommitLocked).
  json& md = Metadata(object);
  md["name"] = key.name;
  if (key.namespace_.empty()) {
    md.erase("namespace");
  } else {
    md["namespace"] = key.namespace_;
  }
  md["uid"] = extras != nullptr && !extras->uid.empty() ? extras->uid : NewUid();
  md["creationTimestamp"] = Now();
  md["generation"] = 1;
  auto rv = CommitLocked(key, control::ChangeType::kAdded, object, extras);
  if (!rv.ok()) return rv.status();
  return object;
}

Result<json> ObjectStore::Update(const control::ObjectKey& key, json object, WriteScope scope) {
  return Mutate(
      key, [&object](const json&) -> Result<json> { return std::move(object); }, scope);
}

Result<json> ObjectStore::Mutate(const control::ObjectKey& key, const Mutator& mutate,
                                 WriteScope scope,
                                 const std::shared_ptr<const control::DecodedJob>* decoded) {
  if (InBatchOnThisThread()) return MutateNow(key, mutate, scope, decoded);
  return Grouped([&]() { return MutateNow(key, mutate, scope, decoded); });
}

Result<json> ObjectStore::MutateNow(const control::ObjectKey& key, const Mutator& mutate,
                                    WriteScope scope,
                                    const std::shared_ptr<const control::DecodedJob>* decoded) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  auto existing = ReadLocked(key);
  if (!existing.ok()) return existing.status();
  if (!existing->has_value()) return NotFound(key.name);
  const json& current = **existing;
  auto desired = mutate(current);
  if (!desired.ok()) return desired.status();
  if (!desired->is_object()) return InvalidArgument("object must be a JSON object");
  std::optional<int64_t> want = ParseResourceVersion(*desired);
  if (want && *want < 0) return InvalidArgument("metadata.resourceVersion must be a number");
  if (want && *want != ParseResourceVersion(current).value_or(0)) {
    return Conflict(
        "the object has been modified; please apply your changes to the latest "
        "version and try again");
  }
  json next;
  if (scope == WriteScope::kStatus) {
    next = current;
    if (desired->contains("status")) {
      next["status"] = (*desired)["status"];
    } else {
      next.erase("status");
    }
  } else {
    next = std::move(*desired);
    if (scope == WriteScope::kSpec) {
      if (current.contains("status")) {
        next["status"] = current["status"];
      } else {
        next.erase("status");
      }
    }
    // Identity and server-set fields are not the client's to change.
    json& md = Metadata(next);
    const json& cur_md = current["metadata"];
    // An update can neither clear nor move a deletion mark (graceful_deletion.h).
    for (const char* f : {"name", "namespace", "uid", "creationTimestamp", "generation",
                          "deletionTimestamp", "deletionGracePeriodSeconds"}) {
      if (cur_md.contains(f)) {
        md[f] = cur_md[f];
      } else {
        md.erase(f);
      }
    }
    if (SpecPart(next) != SpecPart(current)) {
      md["generation"] = cur_md.value("generation", int64_t{1}) + 1;
    }
  }
  Metadata(next)["resourceVersion"] = current["metadata"].value("resourceVersion", "");
  if (next == current) return next;  // a no-op write keeps its resourceVersion
  WriteExtras extras;
  if (decoded != nullptr) extras.decoded = *decoded;
  // The update took the last finalizer off an object being deleted: it goes now
  // (not one waiting out a grace period: its kubelet deletes it).
  const bool gone = BeingDeleted(next) && !HeldByFinalizers(next) && DeletionGracePeriod(next) == 0;
  auto rv = CommitLocked(key, gone ? control::ChangeType::kDeleted : control::ChangeType::kModified,
                         next, &extras);
  if (!rv.ok()) return rv.status();
  return next;
}

Result<json> ObjectStore::Delete(const control::ObjectKey& key, std::optional<int64_t> expected_rv,
                                 std::optional<std::string> expected_uid,
                                 const GracePeriod& grace) {
  if (InBatchOnThisThread()) return DeleteNow(key, expected_rv, expected_uid, grace);
  return Grouped([&]() { return DeleteNow(key, expected_rv, expected_uid, grace); });
}

Result<json> ObjectStore::DeleteNow(const control::ObjectKey& key,
                                    std::optional<int64_t> expected_rv,
                                    std::optional<std::string> expected_uid,
                                    const GracePeriod& grace) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  auto existing = ReadLocked(key);
  if (!existing.ok()) return existing.status();
  if (!existing->has_value()) return NotFound(key.name);
  json object = std::move(**existing);
  if (expected_rv && *expected_rv != ParseResourceVersion(object).value_or(0)) {
    return Conflict("precondition failed: resourceVersion does not match");
  }
  if (expected_uid && *expected_uid != object["metadata"].value("uid", "")) {
    return Conflict("precondition failed: uid does not match");
  }
  if (const int64_t period = grace ? grace(object) : 0; period > 0) {
    // Marked with its period, not removed: its kubelet deletes it once stopped.
    if (!MarkForGracefulDeletion(object, Now(), period)) return object;
    auto rv = CommitLocked(key, control::ChangeType::kModified, object);
    if (!rv.ok()) return rv.status();
    return object;
  }
  if (HeldByFinalizers(object)) {
    // Marked, not removed: it goes once an update takes its last finalizer off.
    if (BeingDeleted(object) && DeletionGracePeriod(object) == 0) return object;
    MarkForDeletion(object, Now());
    auto rv = CommitLocked(key, control::ChangeType::kModified, object);
    if (!rv.ok()) return rv.status();
    return object;
  }
  auto rv = CommitLocked(key, control::ChangeType::kDeleted, object);
  if (!rv.ok()) return rv.status();
  return object;
}

}  // namespace muster::server
