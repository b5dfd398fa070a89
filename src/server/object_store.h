// ObjectStore: the durable object store behind `muster serve`. One SQLite database
// (WAL, synchronous=FULL) under --data holds every object as JSON keyed by
// (resource, namespace, name), a global resourceVersion counter and a bounded log
// of changes for watches. Every write is one transaction committed before the call
// returns, so an acknowledged write survives kill -9; the primary key makes a
// duplicate object impossible.
//
// All writes go through one mutex: the one ordered path the engine relies on. After
// each commit the change is published to hub() in resourceVersion order.
//
// Engine seam: the engine thread calls hub().Subscribe(cb) to receive every change
// (cb queues it; see WatchHub), reads a consistent starting state with List(), and
// writes its decisions back with UpdateStatus()/Create() (Workload objects, status
// conditions) like any other client, so its writes are durable and watchable too.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "control/object_reader.h"
#include "core/status.h"
#include "server/watch_hub.h"

struct sqlite3;

namespace muster::server {

// Which part of an object an update may change (the status subresource convention).
enum class WriteScope {
  kAll,     // everything (kinds without a status subresource, internal writers)
  kSpec,    // everything but .status: the stored status is kept
  kStatus,  // only .status: everything else is kept
};

struct StoreOptions {
  size_t event_retention = 10000;  // changes kept for watches resuming from an old rv
  // RFC 3339 UTC "now" for creationTimestamp; the wall clock when empty.
  std::function<std::string()> now;
};

class ObjectStore : public control::ObjectReader {
 public:
  // Opens (creating if needed) DIR/muster.db. Fails if another process holds it, if
  // SQLite's quick_check finds the file damaged, or if DIR/muster.db is missing or
  // empty although DIR/store-created says this directory had a store (a truncated
  // or deleted database must not start as an empty cluster).
  static Result<std::unique_ptr<ObjectStore>> Open(const std::string& dir,
                                                   StoreOptions options = {});
  ~ObjectStore() override;
  ObjectStore(const ObjectStore&) = delete;
  ObjectStore& operator=(const ObjectStore&) = delete;

  Result<nlohmann::json> Get(const control::ObjectKey& key) const override;
  // `namespace_` empty: every namespace.
  Result<control::ListResult> List(const std::string& resource,
                                   const std::string& namespace_) const override;

  // Stores a new object. Sets metadata.uid, creationTimestamp, generation (1),
  // resourceVersion; kAlreadyExists if the key is taken.
  Result<nlohmann::json> Create(const control::ObjectKey& key, nlohmann::json object);

  // Replaces the stored object within `scope`. If object.metadata.resourceVersion is
  // set it must equal the stored one (kConflict otherwise: optimistic concurrency).
  // uid and creationTimestamp are kept; generation grows when anything outside
  // metadata and status changes. An update that changes nothing writes nothing.
  Result<nlohmann::json> Update(const control::ObjectKey& key, nlohmann::json object,
                                WriteScope scope);

  // Read-modify-write under the write lock (PATCH): `mutate` gets the stored object
  // and returns the desired one, which is then applied like Update().
  using Mutator = std::function<Result<nlohmann::json>(const nlohmann::json& current)>;
  Result<nlohmann::json> Mutate(const control::ObjectKey& key, const Mutator& mutate,
                                WriteScope scope);

  // Removes the object and returns it as it was. `expected_rv`/`expected_uid`:
  // DeleteOptions preconditions (kConflict on mismatch).
  Result<nlohmann::json> Delete(const control::ObjectKey& key,
                                std::optional<int64_t> expected_rv = {},
                                std::optional<std::string> expected_uid = {});

  // Runs `writes` (Create / Update / Mutate / Delete calls on this store, made from
  // this thread) as one transaction: one commit, so one fsync, for all of them; their
  // changes are published in order after it. Nothing written in the batch is durable
  // before Batch returns; if a write or the commit fails, the whole batch is rolled
  // back and the error returned (the values the calls returned are void then). Other
  // threads wait until it ends. For derived writes (the scheduler's status, pods,
  // events); an API write is acknowledged only by its own commit. Nested: joins the
  // outer batch.
  Status Batch(const std::function<void()>& writes);

  int64_t resource_version() const;
  WatchHub& hub() { return hub_; }

  // Stored objects that could not be read at start-up (not JSON, not an object, or
  // a name that is not the row's): moved into table `quarantine` of the database,
  // where an operator can look at them, and out of every list; one line each,
  // "resource namespace/name: why". Empty for a healthy store.
  const std::vector<std::string>& quarantined() const { return quarantined_; }

 private:
  ObjectStore(sqlite3* db, StoreOptions options);
  Status Init();
  Status QuarantineUnreadable();  // at start-up, before anything reads the objects
  Result<std::optional<nlohmann::json>> ReadLocked(const control::ObjectKey& key) const;
  // One transaction: bump the rv, write (or delete) the row, log the change.
  Result<int64_t> CommitLocked(const control::ObjectKey& key, control::ChangeType type,
                               nlohmann::json& object);
  std::string NewUid();
  std::string Now() const;

  sqlite3* db_;
  StoreOptions options_;
  // Recursive so that the writes of a Batch (which holds it) can take it again.
  mutable std::recursive_mutex mu_;
  int batch_depth_ = 0;
  Status batch_error_;                          // first failure inside the open batch
  std::vector<control::Change> batch_changes_;  // published when the batch commits
  int64_t rv_ = 0;
  int64_t writes_since_prune_ = 0;
  std::mt19937_64 rng_;
  WatchHub hub_;
  std::vector<std::string> quarantined_;
};

// metadata.resourceVersion as a number; nullopt when absent, -1 when malformed.
std::optional<int64_t> ParseResourceVersion(const nlohmann::json& object);

}  // namespace muster::server
