#include "server/namespace_controller.h"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <optional>
#include <vector>

#include "control/resource_types.h"
#include "server/graceful_deletion.h"
#include "server/namespace_lifecycle.h"
#include "server/object_store.h"
#include "server/patch_request.h"

namespace muster::server {
namespace {

using nlohmann::json;

void LogNamespaces(const std::string& line) {
  std::cerr << "muster serve: namespace controller: " << line << std::endl;
}

// What one pass found still in the namespace.
struct Remaining {
  std::map<std::string, int64_t> by_resource;   // "<plural>.<group>" -> objects
  std::map<std::string, int64_t> by_finalizer;  // finalizer -> objects naming it
  std::vector<std::string> errors;              // deletes that failed
  bool empty() const { return by_resource.empty(); }
};

void Tally(Remaining& left, const std::string& resource, const json& object) {
  ++left.by_resource[resource];
  const json meta = object.value("metadata", json::object());
  const json finalizers = meta.is_object() ? meta.value("finalizers", json::array()) : json();
  if (!finalizers.is_array()) return;
  for (const json& f : finalizers) {
    if (f.is_string()) ++left.by_finalizer[f.get<std::string>()];
  }
}

// Deletes every object of `type` in `ns` not yet marked, in batches (one fsync per
// batch), and tallies what stays: objects a finalizer holds.
void EmptyType(ObjectStore& store, const control::ResourceType& type, const std::string& ns,
               Remaining& left) {
  auto list = store.List(type.StoreKey(), ns);
  if (!list.ok()) {
    left.errors.push_back(type.StoreKey() + ": " + list.status().message());
    return;
  }
  const std::string resource = type.plural + "." + type.group;  // upstream's "pods."
  constexpr size_t kPerBatch = 256;
  const std::vector<json>& items = list->items;
  for (size_t begin = 0; begin < items.size(); begin += kPerBatch) {
    const size_t end = std::min(items.size(), begin + kPerBatch);
    Status batch = store.Batch([&] {
      for (size_t i = begin; i < end; ++i) {
        const json& item = items[i];
        if (BeingDeleted(item)) {
          Tally(left, resource, item);
          continue;
        }
        const json meta = item.value("metadata", json::object());
        const std::string uid = meta.value("uid", "");
        auto deleted = store.Delete({type.StoreKey(), ns, meta.value("name", "")}, std::nullopt,
                                    uid.empty() ? std::nullopt : std::optional(uid));
        if (deleted.ok()) {
          if (BeingDeleted(*deleted)) Tally(left, resource, *deleted);
        } else if (deleted.status().code() != StatusCode::kNotFound &&
                   deleted.status().code() != StatusCode::kConflict) {
          // Gone meanwhile, or re-created under the name (its own change brings
          // another pass): neither is a failure.
          left.errors.push_back(type.StoreKey() + " " + meta.value("name", "") + ": " +
                                deleted.status().message());
        }
      }
    });
    if (!batch.ok()) left.errors.push_back(type.StoreKey() + ": " + batch.message());
  }
}

struct Condition {
  const char* type;
  const char* ok_reason;
  const char* ok_message;
};

// Upstream's order, and what each says when nothing is wrong.
constexpr Condition kConditions[] = {
    {"NamespaceDeletionDiscoveryFailure", "ResourcesDiscovered",
     "All resources successfully discovered"},
    {"NamespaceDeletionGroupVersionParsingFailure", "ParsedGroupVersions",
     "All legacy kube types successfully parsed"},
    {"NamespaceDeletionContentFailure", "ContentDeleted",
     "All content successfully deleted, may be waiting on finalization"},
    {"NamespaceContentRemaining", "ContentRemoved", "All content successfully removed"},
    {"NamespaceFinalizersRemaining", "ContentHasNoFinalizers",
     "All content-preserving finalizers finished"},
};

std::string JoinCounts(const std::map<std::string, int64_t>& counts, const std::string& verb) {
  std::string out;
  for (const auto& [name, n] : counts) {
    if (!out.empty()) out += ", ";
    out += name + verb + std::to_string(n) + " resource instances";
  }
  return out;
}

// The conditions for `left`, keyed by type: True ones only (the rest are the OK ones).
std::map<std::string, std::pair<std::string, std::string>> Failing(const Remaining& left) {
  std::map<std::string, std::pair<std::string, std::string>> failing;
  if (!left.errors.empty()) {
    std::string joined;
    for (const std::string& e : left.errors) joined += (joined.empty() ? "" : ", ") + e;
    failing["NamespaceDeletionContentFailure"] = {
        "ContentDeletionFailed", "Failed to delete all resource types, " +
                                     std::to_string(left.errors.size()) + " remaining: " + joined};
  }
  if (!left.by_resource.empty()) {
    failing["NamespaceContentRemaining"] = {
        "SomeResourcesRemain",
        "Some resources are remaining: " + JoinCounts(left.by_resource, " has ")};
  }
  if (!left.by_finalizer.empty()) {
    failing["NamespaceFinalizersRemaining"] = {
        "SomeFinalizersRemain", "Some content in the namespace has finalizers remaining: " +
                                    JoinCounts(left.by_finalizer, " in ")};
  }
  return failing;
}

// `status.conditions` brought to what `left` says; lastTransitionTime moves only when
// a condition's status does. Returns whether anything changed.
bool UpdateConditions(json& status, const Remaining& left, const std::string& now) {
  if (!status.is_object()) status = json::object();
  json& list = status["conditions"];
  if (!list.is_array()) list = json::array();
  const auto failing = Failing(left);
  bool changed = false;
  for (const Condition& c : kConditions) {
    auto f = failing.find(c.type);
    const std::string state = f != failing.end() ? "True" : "False";
    const std::string reason = f != failing.end() ? f->second.first : c.ok_reason;
    const std::string message = f != failing.end() ? f->second.second : c.ok_message;
    auto old = std::find_if(list.begin(), list.end(), [&](const json& x) {
      return x.is_object() && x.value("type", "") == c.type;
    });
    if (old == list.end()) {
      list.push_back({{"type", c.type},
                      {"status", state},
                      {"lastTransitionTime", now},
                      {"reason", reason},
                      {"message", message}});
      changed = true;
      continue;
    }
    if (old->value("status", "") == state && old->value("reason", "") == reason &&
        old->value("message", "") == message) {
      continue;
    }
    if (old->value("status", "") != state) (*old)["lastTransitionTime"] = now;
    (*old)["status"] = state;
    (*old)["reason"] = reason;
    (*old)["message"] = message;
    changed = true;
  }
  return changed;
}

// Mutate has no uid precondition (Delete does): a Namespace deleted and re-created
// under the name between the pass's read and its write is not the one it emptied.
Status SameNamespace(const json& current, const std::string& uid) {
  if (current.value("metadata", json::object()).value("uid", "") == uid) return Status();
  return Status(StatusCode::kConflict, "the namespace was re-created");
}

bool WaitsOnUs(const json& ns) {
  const json spec = ns.value("spec", json::object());
  const json finalizers = spec.is_object() ? spec.value("finalizers", json::array()) : json();
  return finalizers.is_array() &&
         std::find(finalizers.begin(), finalizers.end(), kNamespaceFinalizer) != finalizers.end();
}

}  // namespace

Result<bool> NamespaceDeleter::Sync(ObjectStore& store, const std::string& name,
                                    const std::string& now) {
  const control::ObjectKey key{"namespaces", "", name};
  auto ns = store.Get(key);
  if (!ns.ok()) {
    if (ns.status().code() == StatusCode::kNotFound) return true;
    return ns.status();
  }
  if (!BeingDeleted(*ns) || !WaitsOnUs(*ns)) return true;
  const std::string uid = ns->value("metadata", json::object()).value("uid", "");

  Remaining left;
  for (const control::ResourceType& type : control::ResourceTypes()) {
    if (!type.namespaced || type.view || type.review) continue;
    EmptyType(store, type, name, left);
  }

  // The conditions first (upstream writes them before finalizing too).
  auto status = store.Mutate(
      key,
      [&](const json& current) -> Result<json> {
        if (Status same = SameNamespace(current, uid); !same.ok()) return same;
        json next = current;
        if (!UpdateConditions(next["status"], left, now)) return current;
        return next;
      },
      WriteScope::kStatus);
  if (!status.ok()) {
    if (status.status().code() == StatusCode::kNotFound ||
        status.status().code() == StatusCode::kConflict)
      return true;
    return status.status();
  }
  if (!left.empty() || !left.errors.empty()) return false;

  // Nothing left: the "kubernetes" finalizer comes off, and with the last finalizer
  // the Namespace goes (object_store.h).
  auto finalized = store.Mutate(
      key,
      [&](const json& current) -> Result<json> {
        if (Status same = SameNamespace(current, uid); !same.ok()) return same;
        json next = current;
        json& finalizers = next["spec"]["finalizers"];
        json kept = json::array();
        for (const json& f : finalizers) {
          if (f != kNamespaceFinalizer) kept.push_back(f);
        }
        finalizers = std::move(kept);
        return next;
      },
      WriteScope::kSpec);
  if (!finalized.ok() && finalized.status().code() != StatusCode::kNotFound &&
      finalized.status().code() != StatusCode::kConflict) {
    return finalized.status();
  }
  return true;
}

void NamespaceDeleter::AdoptLegacyNamespaces(ObjectStore& store) {
  auto list = store.List("namespaces", "");
  if (!list.ok()) return;
  for (const json& ns : list->items) {
    if (ns.contains("spec") || BeingDeleted(ns)) continue;
    const std::string name = ns.value("metadata", json::object()).value("name", "");
    auto adopted = store.Mutate(
        {"namespaces", "", name},
        [](const json& current) -> Result<json> {
          json next = current;
          if (next.contains("spec")) return next;
          next["spec"] = {{"finalizers", {kNamespaceFinalizer}}};
          LabelNamespaceName(next);
          return next;
        },
        WriteScope::kSpec);
    if (!adopted.ok() && adopted.status().code() != StatusCode::kNotFound)
      LogNamespaces("namespace " + name + ": " + adopted.status().message());
  }
}

Status NamespaceController::Start(ServeContext& context) {
  store_ = &context.store;
  StoreChangeLoop::Hooks hooks;
  // Under the writer's lock: a namespace change, or anything in a namespace while one
  // is being deleted (the loop tells which).
  hooks.wants = [this](const control::Change& change) {
    return change.resource == "namespaces" ||
           (!change.namespace_.empty() && terminating_count_.load() > 0);
  };
  hooks.run = [this](StoreChangeLoop::Changes& changes) { Run(changes); };
  // A pass that could not finish (content a finalizer holds, a failed write) is
  // retried while the namespace waits, as upstream requeues it.
  hooks.next_wake = [this]() -> std::optional<StoreChangeLoop::Clock::time_point> {
    if (terminating_.empty()) return std::nullopt;
    return StoreChangeLoop::Clock::now() + std::chrono::seconds(5);
  };
  // A deletion empties many objects at once: one pass for the burst of their changes.
  hooks.coalesce = std::chrono::milliseconds(20);
  loop_.Subscribe(store_->hub(), std::move(hooks));
  NamespaceDeleter::AdoptLegacyNamespaces(*store_);
  if (auto list = store_->List("namespaces", ""); list.ok()) {
    for (const json& ns : list->items) {
      if (!BeingDeleted(ns)) continue;
      const std::string name = ns.value("metadata", json::object()).value("name", "");
      terminating_.insert(name);
      dirty_.insert(name);
    }
  }
  terminating_count_ = terminating_.size();
  loop_.Start();
  return Status();
}

void NamespaceController::Run(StoreChangeLoop::Changes& changes) {
  for (const auto& change : changes) {
    if (change->resource == "namespaces") {
      if (change->type != control::ChangeType::kDeleted && BeingDeleted(change->Object())) {
        terminating_.insert(change->name);
        dirty_.insert(change->name);
      } else {
        terminating_.erase(change->name);
        dirty_.erase(change->name);
      }
    } else if (terminating_.count(change->namespace_) > 0) {
      dirty_.insert(change->namespace_);
    }
  }
  // No change at all: the retry's wake-up, every waiting namespace again.
  if (changes.empty()) dirty_ = terminating_;
  const std::string now = NowRfc3339();
  for (const std::string& name : std::exchange(dirty_, {})) {
    auto done = NamespaceDeleter::Sync(*store_, name, now);
    if (!done.ok()) {
      LogNamespaces("namespace " + name + ": " + done.status().message());
      continue;
    }
    if (*done) terminating_.erase(name);
  }
  terminating_count_ = terminating_.size();
}

void NamespaceController::Stop() { loop_.Stop(); }

}  // namespace muster::server
