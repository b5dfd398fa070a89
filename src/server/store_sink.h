// StoreSink: the reconciler's writes into serve's own store (control/status_sink.h).
// Synchronous: each write is made when it is submitted, inside the step's store
// transaction (SchedulerController::Step runs the step in ObjectStore::Batch), and
// its result is ready at once.
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

 private:
  Result<nlohmann::json> Write(const control::WriteOp& op);

  ObjectStore& store_;
  std::vector<control::WriteResult> results_;
};

}  // namespace muster::server
