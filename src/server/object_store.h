// ObjectStore: the durable object store behind `muster serve`. One SQLite database
// (WAL, synchronous=FULL) under --data holds a bounded log of changes for watches,
// every object keyed by (resource, namespace, name) as a reference to its last change
// (whose JSON is the object's: written once) and a global resourceVersion counter.
// Every write is one transaction committed before the call
// returns, so an acknowledged write survives kill -9; the primary key makes a
// duplicate object impossible.
//
// All writes go through one mutex: the one ordered path the engine relies on. After
// each commit the change is published to hub() in resourceVersion order. Writes made
// at the same time from different threads (concurrent API requests) share a commit,
// so one fsync, while each caller still returns only once its write is durable
// (group commit: see Grouped).
//
// Engine seam: the engine thread calls hub().Subscribe(cb) to receive every change
// (cb queues it; see WatchHub), reads a consistent starting state with List(), and
// writes its decisions back with UpdateStatus()/Create() (Workload objects, status
// conditions) like any other client, so its writes are durable and watchable too.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "control/object_reader.h"
#include "core/status.h"
#include "server/object_text_cache.h"
#include "server/watch_hub.h"

struct sqlite3;

namespace muster::server {

namespace sqlite {
class StmtCache;  // sqlite_stmt.h
}

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
  // SQLite's max_page_count (0: no limit): a store this size is "disk full" to every
  // write, which is how tests reach the path a full disk takes.
  int64_t max_page_count = 0;
  // Test-only fault hook (null in serve): asked before each transaction commits
  // (every write commits through Batch, a lone one or a group too); a status that is
  // not ok fails it as a failed commit would (rolled back, returned, recorded in
  // write_health()), so tests reach a failing disk's paths without one. Called
  // under the store's write lock, on the committing thread.
  std::function<Status()> batch_fault;
};

// Whether the store took its last write: what /readyz reports (kube-apiserver's etcd
// check). Read without the write lock, so a probe never waits behind a long batch.
struct WriteHealth {
  bool writable = true;
  std::string reason;                                  // SQLite's error when not writable
  std::chrono::steady_clock::time_point last_write{};  // last commit or probe that took
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

  // Reads see every committed write. They are served from the text cache, so they
  // never wait for a commit in progress (its fsync); inside a Batch, on the batch's
  // thread, they read the open transaction instead, the batch's own writes included.
  Result<nlohmann::json> Get(const control::ObjectKey& key) const override;
  // `namespace_` empty: every namespace.
  Result<control::ListResult> List(const std::string& resource,
                                   const std::string& namespace_) const override;

  // What a write may hand over and get back besides the object: the API's creates,
  // and Mutate's commit, which hands over its decode the same way.
  struct WriteExtras {
    // In: `object` decoded as a job (control::DecodeJob's decode), published with the
    // change so that the reconciler does not decode it again.
    std::shared_ptr<const control::DecodedJob> decoded;
    // Out: the text stored for the object, for an answer written without serialising
    // it again.
    ObjectTextCache::Entry text;
    // In, for a create: the uid the object gets, drawn with DrawUid() before the
    // write because a default derives from it (a Job's generated selector); empty:
    // the create draws one.
    std::string uid;
  };
  // A fresh metadata.uid (RFC 4122 version 4), for WriteExtras::uid.
  std::string DrawUid();
  // Stores a new object. Sets metadata.uid, creationTimestamp, generation (1),
  // resourceVersion; kAlreadyExists if the key is taken.
  Result<nlohmann::json> Create(const control::ObjectKey& key, nlohmann::json object,
                                WriteExtras* extras = nullptr);

  // Replaces the stored object within `scope`. If object.metadata.resourceVersion is
  // set it must equal the stored one (kConflict otherwise: optimistic concurrency).
  // uid and creationTimestamp are kept; generation grows when anything outside
  // metadata and status changes. An update that changes nothing writes nothing.
  Result<nlohmann::json> Update(const control::ObjectKey& key, nlohmann::json object,
                                WriteScope scope);

  // Read-modify-write under the write lock (PATCH): `mutate` gets the stored object
  // and returns the desired one, which is then applied like Update().
  // `decoded`: read once `mutate` has run (which may set it): the desired object
  // decoded as a job, published with the change (WriteExtras). The
  // decode reads neither status nor the server-set metadata, which the write may
  // take from the stored object.
  using Mutator = std::function<Result<nlohmann::json>(const nlohmann::json& current)>;
  Result<nlohmann::json> Mutate(
      const control::ObjectKey& key, const Mutator& mutate, WriteScope scope,
      const std::shared_ptr<const control::DecodedJob>* decoded = nullptr);

  // The grace period (seconds) a delete gives the object as it is now; none: 0.
  using GracePeriod = std::function<int64_t(const nlohmann::json& current)>;
  // Removes the object and returns it as it was. `expected_rv`/`expected_uid`:
  // DeleteOptions preconditions (kConflict on mismatch). An object a finalizer holds
  // is only marked (graceful_deletion.h) and returned as it is now; an update that
  // takes the last finalizer off a marked object removes it (a DELETED change). A
  // `grace` above 0 for the object marks it for a graceful deletion instead (a Pod
  // its kubelet stops), and it stays until a delete with no period.
  Result<nlohmann::json> Delete(const control::ObjectKey& key,
                                std::optional<int64_t> expected_rv = {},
                                std::optional<std::string> expected_uid = {},
                                const GracePeriod& grace = {});

  // Runs `writes` (Create / Update / Mutate / Delete calls on this store, made from
  // this thread) as one transaction: one commit, so one fsync, for all of them; their
  // changes are published in order after it. Nothing written in the batch is durable
  // before Batch returns; if a write or the commit fails, the whole batch is rolled
  // back and the error returned (the values the calls returned are void then). Other
  // threads wait until it ends. For derived writes (the scheduler's status, pods,
  // events); an API write is acknowledged only by its own commit. Nested: joins the
  // outer batch.
  Status Batch(const std::function<void()>& writes);

  // Between the transactions of a long run of derived writes (the scheduler's step,
  // cut into parts): when API writes are waiting, lets their group commit first,
  // waiting at most `limit`. A mutex gives no turn: the thread that releases it takes
  // it again before a waiter wakes. Never call it inside a Batch.
  void YieldToWriters(std::chrono::milliseconds limit);
  // Whether this thread is inside a Batch (its writes join that transaction).
  bool InBatchOnThisThread() const { return batch_owner_.load() == std::this_thread::get_id(); }

  int64_t resource_version() const;
  WatchHub& hub() { return hub_; }
  // Transactions committed since the store opened (single writes, groups, batches),
  // and writes waiting for their group's leader: for metrics and tests.
  int64_t commits() const { return commits_.load(); }
  // Writes made outside a Batch (the API's, through group commit) since the store
  // opened: a step of derived writes defers what can wait while they keep coming.
  int64_t grouped_writes() const { return grouped_writes_.load(); }
  size_t queued_writes();

  // The stored text of a resource's objects (`namespace_` empty: every namespace) in
  // (namespace, name) order, and the resourceVersion they are as of: what LIST
  // writes out without parsing an object. Read from memory (ObjectTextCache).
  struct TextList {
    int64_t resource_version = 0;
    std::vector<ObjectTextCache::Entry> items;
  };
  TextList ListText(const std::string& resource, const std::string& namespace_) const;

  // The outcome of the last commit or probe (never blocks on the write lock).
  WriteHealth write_health() const;
  // Writes and removes a small row in one transaction (an fsync): tells a full or
  // read-only disk from a quiet one. Updates write_health().
  Status ProbeWritable();

  // A consistent copy of the whole store in a new SQLite file at `path` (which must
  // not exist), like `etcdctl snapshot save`: taken under the write lock, so it is
  // one resourceVersion. Returns that resourceVersion.
  Result<int64_t> SaveSnapshot(const std::string& path);
  // Makes DIR/muster.db from a snapshot (`etcdctl snapshot restore`): the snapshot
  // must pass SQLite's integrity check and hold a muster store; DIR must not have a
  // store yet (restoring over a live one would fork its history). Offline: no
  // server may use DIR. Returns the snapshot's resourceVersion.
  static Result<int64_t> RestoreSnapshot(const std::string& snapshot, const std::string& dir);

  // Stored objects that could not be read at start-up (not JSON, not an object, or
  // a name that is not the row's): moved into table `quarantine` of the database,
  // where an operator can look at them, and out of every list; one line each,
  // "resource namespace/name: why". Empty for a healthy store.
  const std::vector<std::string>& quarantined() const { return quarantined_; }

 private:
  ObjectStore(sqlite3* db, StoreOptions options);
  Status Init();
  // At start-up, before anything reads the objects (object_store_load.cc): a store
  // whose objects table still holds the bodies is moved to bodies kept once, in the
  // change log; then every object is read.
  Status MigrateObjectBodies();
  Status LoadStoredObjects();
  Result<std::optional<nlohmann::json>> ReadLocked(const control::ObjectKey& key) const;
  // The writes themselves, run by the calling thread or by a group's leader.
  Result<nlohmann::json> CreateNow(const control::ObjectKey& key, nlohmann::json object,
                                   WriteExtras* extras);
  Result<nlohmann::json> MutateNow(const control::ObjectKey& key, const Mutator& mutate,
                                   WriteScope scope,
                                   const std::shared_ptr<const control::DecodedJob>* decoded);
  Result<nlohmann::json> DeleteNow(const control::ObjectKey& key,
                                   std::optional<int64_t> expected_rv,
                                   std::optional<std::string> expected_uid,
                                   const GracePeriod& grace);
  // Group commit. A write from a thread that is not inside a Batch is queued; the
  // first queued thread that finds no leader becomes one, takes every queued write
  // and runs them, in queue order, as one Batch (one commit, one fsync); the others
  // wait for it. Writes that arrive meanwhile form the next group. Each write's
  // own outcome is its caller's (a conflict fails only that write); a failed commit
  // fails every write of the group, none of which is then stored. One writer alone
  // commits at once, as before. Each waiting thread is woken alone (for its outcome,
  // or to lead the next group), never all of them for every group.
  Result<nlohmann::json> Grouped(const std::function<Result<nlohmann::json>()>& write);
  // One transaction: bump the rv, write (or delete) the row, log the change (whose
  // body is the row's). kAlreadyExists, with nothing written, when a create's name
  // is taken. `extras`: see WriteExtras.
  Result<int64_t> CommitLocked(const control::ObjectKey& key, control::ChangeType type,
                               nlohmann::json& object, WriteExtras* extras = nullptr);
  // The SQLite paths of Get and List, under mu_ (a batch's thread).
  Result<nlohmann::json> GetLocked(const control::ObjectKey& key) const;
  Result<control::ListResult> ListLocked(const std::string& resource,
                                         const std::string& namespace_) const;
  // Makes a committed write's text visible to readers (texts_mu_ taken here).
  void PublishText(const control::ObjectKey& key, ObjectTextCache::Entry text);
  std::string NewUid();
  void NoteWrite(const Status& outcome);
  std::string Now() const;

  sqlite3* db_;
  std::unique_ptr<sqlite::StmtCache> stmts_;  // guarded by mu_
  StoreOptions options_;
  // Recursive so that the writes of a Batch (which holds it) can take it again.
  mutable std::recursive_mutex mu_;
  int batch_depth_ = 0;
  std::atomic<std::thread::id> batch_owner_{};  // the thread inside Batch, if any
  struct GroupedWrite;
  std::mutex group_mu_;  // guards the four below; never held while waiting on mu_
  std::vector<GroupedWrite*> group_queue_;
  bool group_leader_ = false;
  uint64_t groups_done_ = 0;  // groups committed (or failed): YieldToWriters waits on it
  std::condition_variable group_done_cv_;
  std::atomic<int64_t> commits_{0};
  std::atomic<int64_t> grouped_writes_{0};
  Status batch_error_;                          // first failure inside the open batch
  std::vector<control::Change> batch_changes_;  // published when the batch commits
  // Text cache updates of the open batch (null: erased), applied when it commits.
  std::vector<std::pair<control::ObjectKey, ObjectTextCache::Entry>> batch_texts_;
  // The committed objects and the resourceVersion they are as of: written under mu_
  // and texts_mu_ when a commit is done, read under texts_mu_ alone.
  mutable std::shared_mutex texts_mu_;
  ObjectTextCache texts_;
  int64_t texts_rv_ = 0;
  int64_t rv_ = 0;  // guarded by mu_: a batch's writes advance it before they commit
  int64_t writes_since_prune_ = 0;
  // Its own lock: a create draws its uid before it waits for the write lock, which a
  // group commit holds across its fsync (DrawUid would wait for the disk).
  std::mutex rng_mu_;
  std::mt19937_64 rng_;  // guarded by rng_mu_
  WatchHub hub_;
  std::vector<std::string> quarantined_;
  mutable std::mutex health_mu_;  // guards health_ only (never held with mu_ waited on)
  WriteHealth health_;
};

// metadata.resourceVersion as a number; nullopt when absent, -1 when malformed.
std::optional<int64_t> ParseResourceVersion(const nlohmann::json& object);

}  // namespace muster::server
