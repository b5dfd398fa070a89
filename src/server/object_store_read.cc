// ObjectStore's reads: outside a batch from the text cache of committed objects
// (never waiting for a commit's fsync), on a batch's thread from its open
// transaction; and how a commit makes its objects visible to those reads.
#include <sqlite3.h>

#include "server/object_store.h"
#include "server/sqlite_stmt.h"

namespace muster::server {

using nlohmann::json;
using sqlite::SqliteError;
using sqlite::Stmt;

int64_t ObjectStore::resource_version() const {
  if (InBatchOnThisThread()) return rv_;
  std::shared_lock<std::shared_mutex> lock(texts_mu_);
  return texts_rv_;
}

Result<std::optional<json>> ObjectStore::ReadLocked(const control::ObjectKey& key) const {
  // The body is the object's last change's (CommitLocked).
  Stmt q(*stmts_,
         "SELECT e.body FROM objects o JOIN events e ON e.rv = o.rv "
         "WHERE o.resource = ? AND o.namespace = ? AND o.name = ?");
  if (!q.ok()) return SqliteError(db_, "prepare get");
  q.Bind(1, key.resource);
  q.Bind(2, key.namespace_);
  q.Bind(3, key.name);
  int rc = q.Step();
  if (rc == SQLITE_DONE) return std::optional<json>();
  if (rc != SQLITE_ROW) return SqliteError(db_, "get");
  json body = json::parse(q.Text(0), nullptr, false);
  if (body.is_discarded()) return Internal("stored object is not JSON: " + key.name);
  return std::optional<json>(std::move(body));
}

ObjectStore::TextList ObjectStore::ListText(const std::string& resource,
                                            const std::string& namespace_) const {
  std::shared_lock<std::shared_mutex> lock(texts_mu_);
  return TextList{texts_rv_, texts_.List(resource, namespace_)};
}

Result<json> ObjectStore::Get(const control::ObjectKey& key) const {
  if (InBatchOnThisThread()) return GetLocked(key);
  ObjectTextCache::Entry text;
  {
    std::shared_lock<std::shared_mutex> lock(texts_mu_);
    text = texts_.Get(key);
  }
  // Parsed outside the lock: the text is immutable and shared.
  if (text == nullptr) return NotFound(key.name);
  json body = json::parse(text->text, nullptr, false);
  if (body.is_discarded()) return Internal("stored object is not JSON: " + key.name);
  return body;
}

Result<json> ObjectStore::GetLocked(const control::ObjectKey& key) const {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  auto r = ReadLocked(key);
  if (!r.ok()) return r.status();
  if (!r->has_value()) return NotFound(key.name);
  return std::move(**r);
}

Result<control::ListResult> ObjectStore::List(const std::string& resource,
                                              const std::string& namespace_) const {
  if (InBatchOnThisThread()) return ListLocked(resource, namespace_);
  TextList texts = ListText(resource, namespace_);
  control::ListResult out;
  out.resource_version = texts.resource_version;
  out.items.reserve(texts.items.size());
  for (const ObjectTextCache::Entry& text : texts.items) {
    json body = json::parse(text->text, nullptr, false);
    if (!body.is_discarded()) out.items.push_back(std::move(body));
  }
  return out;
}

Result<control::ListResult> ObjectStore::ListLocked(const std::string& resource,
                                                    const std::string& namespace_) const {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  Stmt q(*stmts_, namespace_.empty()
                      ? "SELECT e.body FROM objects o JOIN events e ON e.rv = o.rv "
                        "WHERE o.resource = ? ORDER BY o.namespace, o.name"
                      : "SELECT e.body FROM objects o JOIN events e ON e.rv = o.rv "
                        "WHERE o.resource = ? AND o.namespace = ? ORDER BY o.namespace, o.name");
  if (!q.ok()) return SqliteError(db_, "prepare list");
  q.Bind(1, resource);
  if (!namespace_.empty()) q.Bind(2, namespace_);
  control::ListResult out;
  out.resource_version = rv_;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    json body = json::parse(q.Text(0), nullptr, false);
    if (!body.is_discarded()) out.items.push_back(std::move(body));
  }
  if (rc != SQLITE_DONE) return SqliteError(db_, "list");
  return out;
}

void ObjectStore::PublishText(const control::ObjectKey& key, ObjectTextCache::Entry text) {
  std::unique_lock<std::shared_mutex> lock(texts_mu_);
  if (text) {
    texts_.Put(key, std::move(text));
  } else {
    texts_.Erase(key);
  }
  texts_rv_ = rv_;
}

}  // namespace muster::server
