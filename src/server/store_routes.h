// The API paths about the store itself rather than its objects:
// - GET /readyz: 200 "ok" once the server has started and the store takes writes;
//   503 listing the failing check otherwise (?verbose lists every check, as
//   kube-apiserver does).
// - GET /muster/v1/snapshot: a consistent copy of the whole store (an SQLite file,
//   streamed), what `muster backup --server` saves; like etcd's snapshot it holds
//   every object, Secrets included, so only system:masters may take one.
#pragma once

#include <optional>

#include "server/api_handler.h"
#include "server/object_store.h"

namespace muster::server {

inline constexpr char kSnapshotPath[] = "/muster/v1/snapshot";

ApiResponse HandleReadyz(const ObjectStore& store, bool started, const ApiRequest& request);

// The snapshot is written under DATA/snapshots and unlinked once the stream has it
// open: nothing of it stays on disk.
ApiResult HandleSnapshot(ObjectStore& store, const std::string& data_dir,
                         const ApiRequest& request);

}  // namespace muster::server
