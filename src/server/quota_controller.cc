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
  StoreChangeLoop::Hooks hooks;
  hooks.wants = [](const control::Change& change) {
    return !change.namespace_.empty() ||
           (change.resource == "namespaces" && change.type == control::ChangeType::kAdded);
  };
  hooks.run = [this](StoreChangeLoop::Changes& changes) { Run(changes); };
  // Changes come in bursts (a gang's pods): one recount for the burst.
  hooks.coalesce = std::chrono::milliseconds(100);
  loop_.Subscribe(store_->hub(), std::move(hooks));
  if (auto namespaces = store_->List("namespaces", ""); namespaces.ok()) {
    for (const json& n : namespaces->items) existing_.insert(n["metadata"].value("name", ""));
  }
  loop_.Start();
  return Status();
}

void QuotaController::Run(StoreChangeLoop::Changes& changes) {
  std::set<std::string> dirty, new_ns;
  dirty.swap(existing_);
  new_ns = dirty;
  for (const auto& change : changes) {
    if (change->resource == "namespaces" && change->type == control::ChangeType::kAdded) {
      new_ns.insert(change->name);
    } else {
      dirty.insert(change->namespace_);
    }
  }
  for (const std::string& ns : new_ns) EnsureDefaultAccount(*store_, ns);
  for (const std::string& ns : dirty) Sync(*store_, ns);
}

void QuotaController::Stop() { loop_.Stop(); }

}  // namespace muster::server
