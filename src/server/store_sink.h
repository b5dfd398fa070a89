// StoreSink: the reconciler's writes into serve's own store (control/status_sink.h).
// Synchronous: a write submitted inside a store transaction (ServeStep runs the
// reconciler's Write in ObjectStore::Batch) is made at once, its result ready. One
// submitted outside (the Events of the decisions Decide consumes) is held until the
// next Write's Flush, inside its transaction: made alone, each was a durable
// transaction of its own queued behind the API's group commits, and a cycle that
// admitted a thousand gangs waited seconds for its Events (bench/peers).
#pragma once

#include <vector>

#include "control/status_sink.h"
#include "server/object_store.h"

namespace muster::server {

class StoreSink : public control::StatusSink {
 public:
  explicit StoreSink(ObjectStore& store) : store_(store) {}

  void Submit(control::WriteOp op) override;
  std::vector<control::WriteResult> TakeResults() override;
  void Flush() override;

 private:
  Result<nlohmann::json> Write(const control::WriteOp& op);
  void WriteNow(const control::WriteOp& op);

  ObjectStore& store_;
  std::vector<control::WriteResult> results_;
  std::vector<control::WriteOp> held_;  // submitted outside a transaction
};

}  // namespace muster::server
