// ObjectStore's start-up read of every stored object: readable rows fill the text
// cache LIST is served from; rows that do not read back as their object are moved to
// table `quarantine` and reported, never skipped silently.
#include <nlohmann/json.hpp>

#include "server/object_store.h"
#include "server/sqlite_stmt.h"

namespace muster::server {

using nlohmann::json;
using sqlite::Exec;
using sqlite::SqliteError;
using sqlite::Stmt;

Status ObjectStore::MigrateObjectBodies() {
  {
    Stmt q(db_, "SELECT count(*) FROM pragma_table_info('objects') WHERE name = 'body'");
    if (!q.ok() || q.Step() != SQLITE_ROW) return SqliteError(db_, "read the objects table");
    if (q.Int(0) == 0) return Status::Ok();
  }
  // Every object's body into the change log under the object's rv: the change that
  // wrote it, or one pruned from the log (older than any watch may resume from, so
  // its type matters to no one). Then the rows keep only that rv. One transaction.
  return Exec(db_,
              "BEGIN IMMEDIATE;"
              "INSERT OR IGNORE INTO events (rv, type, resource, namespace, name, body)"
              " SELECT rv, 'MODIFIED', resource, namespace, name, body FROM objects;"
              "CREATE TABLE objects_by_rv (resource TEXT NOT NULL, namespace TEXT NOT NULL,"
              " name TEXT NOT NULL, rv INTEGER NOT NULL,"
              " PRIMARY KEY (resource, namespace, name)) WITHOUT ROWID;"
              "INSERT INTO objects_by_rv SELECT resource, namespace, name, rv FROM objects;"
              "DROP TABLE objects;"
              "ALTER TABLE objects_by_rv RENAME TO objects;"
              "COMMIT;");
}

Status ObjectStore::LoadStoredObjects() {
  struct Bad {
    std::string resource, namespace_, name, why;
  };
  std::vector<Bad> bad;
  {
    std::unique_lock<std::shared_mutex> texts(texts_mu_);
    Stmt q(db_,
           "SELECT o.resource, o.namespace, o.name, e.body, e.rv IS NULL FROM objects o "
           "LEFT JOIN events e ON e.rv = o.rv");
    if (!q.ok()) return SqliteError(db_, "read objects");
    int rc;
    while ((rc = q.Step()) == SQLITE_ROW) {
      Bad b{q.Text(0), q.Text(1), q.Text(2), ""};
      std::string text = q.Text(3);
      const json body = json::parse(text, nullptr, false);
      if (q.Int(4) != 0) {
        b.why = "no stored body (its change is missing)";
      } else if (body.is_discarded()) {
        b.why = "not JSON";
      } else if (!body.is_object() || !body.contains("metadata") || !body["metadata"].is_object()) {
        b.why = "not an object with metadata";
      } else if (body["metadata"].value("name", "") != b.name) {
        b.why = "metadata.name is not the stored name";
      } else {
        // Readable: it starts the text cache LIST is served from.
        texts_.Put({b.resource, b.namespace_, b.name},
                   std::make_shared<const StoredText>(StoredText{
                       std::move(text), body.value("apiVersion", ""), body.value("kind", "")}));
        continue;
      }
      bad.push_back(std::move(b));
    }
    if (rc != SQLITE_DONE) return SqliteError(db_, "read objects");
  }
  if (bad.empty()) return Status::Ok();
  if (Status s = Exec(db_,
                      "CREATE TABLE IF NOT EXISTS quarantine (resource TEXT NOT NULL, namespace "
                      "TEXT NOT NULL, name TEXT NOT NULL, body TEXT NOT NULL, reason TEXT NOT "
                      "NULL, at TEXT NOT NULL); BEGIN IMMEDIATE;");
      !s.ok())
    return s;
  for (const Bad& b : bad) {
    Stmt move(db_,
              "INSERT INTO quarantine SELECT o.resource, o.namespace, o.name, "
              "coalesce(e.body, ''), ?, ? FROM objects o LEFT JOIN events e ON e.rv = o.rv "
              "WHERE o.resource = ? AND o.namespace = ? AND o.name = ?");
    Stmt drop(db_, "DELETE FROM objects WHERE resource = ? AND namespace = ? AND name = ?");
    if (!move.ok() || !drop.ok()) {
      Exec(db_, "ROLLBACK");
      return SqliteError(db_, "quarantine");
    }
    move.Bind(1, b.why);
    move.Bind(2, Now());
    move.Bind(3, b.resource);
    move.Bind(4, b.namespace_);
    move.Bind(5, b.name);
    drop.Bind(1, b.resource);
    drop.Bind(2, b.namespace_);
    drop.Bind(3, b.name);
    if (move.Step() != SQLITE_DONE || drop.Step() != SQLITE_DONE) {
      Exec(db_, "ROLLBACK");
      return SqliteError(db_, "quarantine");
    }
    quarantined_.push_back(b.resource + " " + (b.namespace_.empty() ? "" : b.namespace_ + "/") +
                           b.name + ": " + b.why);
  }
  return Exec(db_, "COMMIT");
}

}  // namespace muster::server
