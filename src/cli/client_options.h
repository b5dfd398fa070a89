// Flags every client command (apply, get, describe, delete, logs) shares, and how
// they report errors.
#pragma once

#include <string>

#include "core/status.h"

namespace CLI {
class App;
}

namespace muster::cli {

struct ClientOptions {
  std::string server;  // --server; empty: $MUSTER_SERVER, else http://127.0.0.1:8080
  std::string namespace_ = "default";
  bool all_namespaces = false;

  std::string ServerUrl() const;
  // The namespace a request is scoped to: "" with --all-namespaces.
  std::string RequestNamespace() const { return all_namespaces ? "" : namespace_; }
};

// --server and -n/--namespace; -A/--all-namespaces where the command lists.
void AddClientFlags(CLI::App& cmd, ClientOptions& options, bool all_namespaces_flag);

// Prints the error as kubectl does ("Error from server (NotFound): ..." as the
// server put it, "error: ..." otherwise) and returns exit code 1.
int ReportError(const Status& status);

}  // namespace muster::cli
