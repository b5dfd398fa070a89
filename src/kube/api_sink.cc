#include "kube/api_sink.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "control/json_fields.h"

namespace muster::kube {

using json = nlohmann::json;
using control::GenerationOf;
using control::RemoveFinalizer;
using control::WriteKind;
using control::WriteOp;
using control::WriteResult;

namespace {

constexpr const char* kWorkloads = "workloads.kueue.x-k8s.io";

// Whether the JSON pointer `path` is `field` or inside it.
bool Within(const std::string& path, std::string_view field) {
  return path.compare(0, field.size(), field) == 0 &&
         (path.size() == field.size() || path[field.size()] == '/');
}

// The JSON patch that turns `base` into `desired` in metadata and spec, behind a
// test that the spec is still `base`'s: the API server bumps metadata.generation on
// every spec change, and not on status writes (the job controller's), which a
// replace at `base`'s resourceVersion would conflict with. nullopt when `base` has no
// generation. Only the keys that differ are written, so labels and annotations that
// someone else set meanwhile are kept.
std::optional<json> SpecPatch(const json& base, const json& desired) {
  if (!base.is_object() || !desired.is_object()) return std::nullopt;
  const int64_t generation = GenerationOf(base);
  if (generation == 0) return std::nullopt;  // the API server sets it from 1
  json patch = json::array();
  patch.push_back({{"op", "test"}, {"path", "/metadata/generation"}, {"value", generation}});
  for (const char* part : {"metadata", "spec"}) {
    const std::string path = std::string("/") + part;
    auto from = base.find(part);
    auto to = desired.find(part);
    if (to == desired.end()) continue;  // never removed here
    if (from == base.end()) {
      patch.push_back({{"op", "add"}, {"path", path}, {"value", *to}});
      continue;
    }
    for (json& op : json::diff(*from, *to, path)) {
      const std::string& at = op["path"].get_ref<const std::string&>();
      if (Within(at, "/metadata/resourceVersion") || Within(at, "/metadata/managedFields") ||
          Within(at, "/metadata/generation"))
        continue;
      patch.push_back(std::move(op));
    }
  }
  return patch;
}

WriteResult From(const WriteOp& op, Result<json> written) {
  WriteResult r;
  r.id = op.id;
  if (written.ok()) {
    r.object = std::move(written).value();
  } else {
    r.status = written.status();
  }
  return r;
}

}  // namespace

ApiSink::ApiSink(KubeClient& client, int workers, std::function<void()> on_result)
    : writer_(client), on_result_(std::move(on_result)) {
  for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { Work(); });
}

ApiSink::~ApiSink() { Stop(); }

void ApiSink::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    queue_.clear();
  }
  cv_.notify_all();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

void ApiSink::Submit(WriteOp op) {
  if (threads_.empty()) {
    WriteResult r = Run(op);
    std::lock_guard<std::mutex> lock(mu_);
    results_.push_back(std::move(r));
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    queue_.push_back(std::move(op));
  }
  cv_.notify_one();
}

std::vector<WriteResult> ApiSink::TakeResults() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<WriteResult> out;
  out.swap(results_);
  return out;
}

void ApiSink::Work() {
  while (true) {
    WriteOp op;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      op = std::move(queue_.front());
      queue_.pop_front();
    }
    WriteResult r = Run(op);
    {
      std::lock_guard<std::mutex> lock(mu_);
      results_.push_back(std::move(r));
    }
    if (on_result_) on_result_();
  }
}

WriteResult ApiSink::Run(WriteOp& op) {
  switch (op.kind) {
    case WriteKind::kWorkload:
      return WriteWorkload(op);
    case WriteKind::kDeleteWorkload:
    case WriteKind::kDeletePod: {
      Status s = writer_.Delete(op.resource, op.namespace_, op.name);
      return From(op, s.ok() ? Result<json>(json()) : Result<json>(s));
    }
    case WriteKind::kJob:
      return WriteJob(op, /*status=*/false);
    case WriteKind::kJobStatus:
      return WriteJob(op, /*status=*/true);
    case WriteKind::kMergeStatus:
      return From(op, writer_.MergePatchStatus(op.resource, op.namespace_, op.name, op.object));
    case WriteKind::kRemoveFinalizer: {
      // Read, then replaced at that resourceVersion: a conflict is tried again later.
      auto current = writer_.Get(op.resource, op.namespace_, op.name);
      if (!current.ok()) return From(op, std::move(current));
      json next = std::move(current).value();
      if (!RemoveFinalizer(next, op.object.is_string() ? op.object.get<std::string>() : ""))
        return From(op, Result<json>(std::move(next)));
      return From(op, writer_.Replace(op.resource, next));
    }
    case WriteKind::kEvent: {
      Status s = writer_.CreateEvent(op.object, /*repeat=*/!op.create);
      return From(op, s.ok() ? Result<json>(json()) : Result<json>(s));
    }
    case WriteKind::kBind: {
      WriteResult r;
      r.id = op.id;
      // In rank order, as the binder planned them.
      for (const auto& [pod, node] : op.bindings) {
        Status s = writer_.Bind(op.namespace_, pod, node);
        if (!s.ok()) r.failed_bindings.emplace_back(pod, s);
      }
      return r;
    }
  }
  return From(op, FailedPrecondition("unknown write"));
}

// A job object or its status, with the resourceVersion it was read at (a job object
// derived from `base`: patched, PatchJob): on a conflict the fresh object comes back
// with the error, for the next try.
WriteResult ApiSink::WriteJob(const WriteOp& op, bool status) {
  if (!status && op.base != nullptr) {
    if (auto patch = SpecPatch(*op.base, op.object)) return PatchJob(op, *patch);
  }
  auto written = status ? writer_.ReplaceStatus(op.resource, op.object)
                        : writer_.Replace(op.resource, op.object);
  WriteResult r = From(op, std::move(written));
  if (r.status.code() == StatusCode::kConflict) {
    if (auto fresh = writer_.Get(op.resource, op.namespace_, op.name); fresh.ok())
      r.object = std::move(fresh).value();
  }
  return r;
}

// A patch SpecPatch made: its test failing is a 422 like a change the API server
// refuses, told apart by the generation read back.
WriteResult ApiSink::PatchJob(const WriteOp& op, const json& patch) {
  WriteResult r = From(op, writer_.JsonPatch(op.resource, op.namespace_, op.name, patch));
  if (r.status.code() != StatusCode::kInvalidArgument) return r;
  auto fresh = writer_.Get(op.resource, op.namespace_, op.name);
  if (!fresh.ok()) return r;
  if (GenerationOf(*fresh) != patch[0]["value"].get<int64_t>()) {
    r.status = Conflict("the spec changed since it was read (" + r.status.message() + ")");
    r.object = std::move(fresh).value();
  }
  return r;
}

// Kueue's Workload: metadata and spec, then the status subresource (which ignores the
// rest). A create carries no status; an update whose spec did not change skips the
// first write.
WriteResult ApiSink::WriteWorkload(WriteOp& op) {
  json& desired = op.object;
  Result<json> written = json();
  bool spec_written = false;
  if (op.create) {
    // Created without status and resourceVersion: the status is set aside, not copied.
    json status;
    const bool has_status = desired.is_object() && desired.contains("status");
    if (has_status) {
      status = std::move(desired["status"]);
      desired.erase("status");
    }
    if (desired.contains("metadata")) desired["metadata"].erase("resourceVersion");
    written = writer_.Create(kWorkloads, desired);
    if (has_status) desired["status"] = std::move(status);
    spec_written = written.ok();
    if (!written.ok() && written.status().code() == StatusCode::kAlreadyExists)
      written = writer_.Get(kWorkloads, op.namespace_, op.name);
  } else if (!op.status_only) {
    written = writer_.Replace(kWorkloads, desired);
    spec_written = true;
  }
  if (written.ok() && op.create && !spec_written) {
    // It existed already: its metadata and spec are ours to set.
    desired["metadata"]["resourceVersion"] = (*written)["metadata"]["resourceVersion"];
    written = writer_.Replace(kWorkloads, desired);
  }
  if (written.ok() && desired.contains("status")) {
    if (written->is_object() && written->contains("metadata"))
      desired["metadata"]["resourceVersion"] = (*written)["metadata"]["resourceVersion"];
    written = writer_.ReplaceStatus(kWorkloads, desired);
  }
  WriteResult r = From(op, std::move(written));
  if (!r.status.ok()) {
    // Re-read: the next pass writes against the fresh object (null: created again).
    auto fresh = writer_.Get(kWorkloads, op.namespace_, op.name);
    if (fresh.ok()) r.object = std::move(fresh).value();
  }
  return r;
}

}  // namespace muster::kube
