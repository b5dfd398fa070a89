#include "cli/client_options.h"

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>

namespace muster::cli {

std::string ClientOptions::ServerUrl() const {
  if (!server.empty()) return server;
  if (const char* env = std::getenv("MUSTER_SERVER"); env != nullptr && *env != '\0') return env;
  return "http://127.0.0.1:8080";
}

void AddClientFlags(CLI::App& cmd, ClientOptions& options, bool all_namespaces_flag) {
  cmd.add_option("--server", options.server,
                 "API server URL (default: $MUSTER_SERVER, else http://127.0.0.1:8080)");
  cmd.add_option("-n,--namespace", options.namespace_, "Namespace of namespaced objects")
      ->capture_default_str();
  if (all_namespaces_flag) {
    cmd.add_flag("-A,--all-namespaces", options.all_namespaces, "List across every namespace");
  }
}

int ReportError(const Status& status) {
  const std::string& m = status.message();
  if (m.rfind("Error from server", 0) == 0) {
    std::cerr << m << "\n";
  } else {
    std::cerr << "error: " << m << "\n";
  }
  return 1;
}

}  // namespace muster::cli
