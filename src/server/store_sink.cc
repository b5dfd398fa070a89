#include "server/store_sink.h"

#include <utility>

#include "control/json_fields.h"

namespace muster::server {

using json = nlohmann::json;
using control::WriteKind;

Result<json> StoreSink::Write(const control::WriteOp& op) {
  const control::ObjectKey key{op.resource, op.namespace_, op.name};
  switch (op.kind) {
    case WriteKind::kWorkload: {
      // The store is the only writer of what it holds for us, but a user may have
      // deleted or created the object meanwhile: fall back to the other write.
      auto written = op.create ? store_.Create(key, op.object)
                               : store_.Update(key, op.object, WriteScope::kAll);
      if (!written.ok() && written.status().code() == StatusCode::kAlreadyExists) {
        json again = op.object;
        if (again.contains("metadata")) again["metadata"].erase("resourceVersion");
        written = store_.Update(key, std::move(again), WriteScope::kAll);
      } else if (!written.ok() && written.status().code() == StatusCode::kNotFound) {
        json again = op.object;
        if (again.contains("metadata")) again["metadata"].erase("resourceVersion");
        written = store_.Create(key, std::move(again));
      }
      return written;
    }
    case WriteKind::kDeleteWorkload:
    case WriteKind::kDeletePod:
      return store_.Delete(key);
    case WriteKind::kJobStatus:
    case WriteKind::kMergeStatus:
      return store_.Update(key, op.object, WriteScope::kStatus);
    case WriteKind::kEvent: {
      if (op.create) return store_.Create(key, op.object);
      // A repeat: the earlier Event with its new count and lastTimestamp, or that
      // Event again when it has gone meanwhile (its TTL, the event limit).
      auto written = store_.Update(key, op.object, WriteScope::kAll);
      if (!written.ok() && written.status().code() == StatusCode::kNotFound)
        written = store_.Create(key, op.object);
      return written;
    }
    case WriteKind::kJob:
      return store_.Update(key, op.object, WriteScope::kSpec);
    case WriteKind::kRemoveFinalizer: {
      const std::string finalizer = op.object.is_string() ? op.object.get<std::string>() : "";
      return store_.Mutate(
          key,
          [&](const json& current) -> Result<json> {
            json next = current;
            control::RemoveFinalizer(next, finalizer);
            return next;
          },
          WriteScope::kAll);
    }
    case WriteKind::kBind:
      return FailedPrecondition("serve's executor binds its own pods");
  }
  return FailedPrecondition("unknown write");
}

void StoreSink::Submit(control::WriteOp op) {
  if (!store_.InBatchOnThisThread()) {
    held_.push_back(std::move(op));
    return;
  }
  WriteNow(op);
}

void StoreSink::Flush() {
  std::vector<control::WriteOp> held;
  held.swap(held_);
  for (const control::WriteOp& op : held) Submit(op);
}

void StoreSink::WriteNow(const control::WriteOp& op) {
  control::WriteResult result;
  result.id = op.id;
  auto written = Write(op);
  if (written.ok()) {
    result.object = std::move(written).value();
  } else {
    result.status = written.status();
  }
  results_.push_back(std::move(result));
}

std::vector<control::WriteResult> StoreSink::TakeResults() {
  std::vector<control::WriteResult> out;
  out.swap(results_);
  return out;
}

}  // namespace muster::server
