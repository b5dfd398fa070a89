#include "server/quota_controller.h"

#include <chrono>

#include "server/resource_quota.h"

namespace muster::server {

using nlohmann::json;

void QuotaController::Sync(ObjectStore& store, const std::string& ns) {
  auto quotas = store.List("resourcequotas", ns);
  if (!quotas.ok()) return;
  for (const json& quota : quotas->items) {
    json status = QuotaStatus(store, quota);
    if (quota.value("status", json()) == status) continue;
    const std::string name = quota["metadata"].value("name", "");
    // Against the stored object, so a quota changed meanwhile is recounted next pass.
    store.Mutate(
        {"resourcequotas", ns, name},
        [&](const json& current) -> Result<json> {
          json next = current;
          next["status"] = QuotaStatus(store, current);
          return next;
        },
        WriteScope::kStatus);
  }
}

void QuotaController::EnsureDefaultAccount(ObjectStore& store, const std::string& ns) {
  if (ns.empty() || !store.Get({"namespaces", "", ns}).ok()) return;
  if (store.Get({"serviceaccounts", ns, "default"}).ok()) return;
  store.Create({"serviceaccounts", ns, "default"},
               {{"apiVersion", "v1"},
                {"kind", "ServiceAccount"},
                {"metadata", {{"name", "default"}, {"namespace", ns}}}});
}

Status QuotaController::Start(ServeContext& context) {
  store_ = &context.store;
  subscription_ = store_->hub().Subscribe([this](const WatchHub::ChangePtr& shared) {
    const control::Change& change = *shared;
    std::lock_guard<std::mutex> lock(mu_);
    // Only the first change of a burst wakes the loop: it then waits 100 ms for the
    // rest, and one notify per change woke it for nothing every time.
    const bool idle = new_ns_.empty() && dirty_.empty();
    if (change.resource == "namespaces" && change.type == control::ChangeType::kAdded) {
      new_ns_.insert(change.name);
    } else if (!change.namespace_.empty()) {
      dirty_.insert(change.namespace_);
    } else {
      return;
    }
    if (idle) cv_.notify_one();
  });
  if (auto namespaces = store_->List("namespaces", ""); namespaces.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const json& n : namespaces->items) {
      const std::string name = n["metadata"].value("name", "");
      dirty_.insert(name);
      new_ns_.insert(name);
    }
  }
  thread_ = std::thread([this] { Loop(); });
  return Status();
}

void QuotaController::Loop() {
  while (true) {
    std::set<std::string> dirty, new_ns;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !dirty_.empty() || !new_ns_.empty(); });
      if (stopping_) return;
      // Changes come in bursts (a gang's pods): one recount for the burst.
      cv_.wait_for(lock, std::chrono::milliseconds(100), [this] { return stopping_; });
      if (stopping_) return;
      dirty.swap(dirty_);
      new_ns.swap(new_ns_);
    }
    for (const std::string& ns : new_ns) EnsureDefaultAccount(*store_, ns);
    for (const std::string& ns : dirty) Sync(*store_, ns);
  }
}

void QuotaController::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    cv_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
  if (subscription_ != 0 && store_ != nullptr) store_->hub().Unsubscribe(subscription_);
  subscription_ = 0;
}

}  // namespace muster::server
