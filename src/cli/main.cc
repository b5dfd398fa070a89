// muster: one binary, subcommands per mode (see docs/ARCHITECTURE.md).
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>

#include "cli/commands.h"

#if defined(MUSTER_JEMALLOC)
// jemalloc reads this at its start (control/process_heap.h). Its background thread
// returns freed pages once they have been unused for the decay time (10 s), so an idle
// server's RSS falls after a burst of deletions without waiting for its next malloc.
extern "C" {
const char* malloc_conf = "background_thread:true";  // NOLINT: the name jemalloc looks up
}
#endif

namespace {

int Run(int argc, char** argv) {
  CLI::App app{"muster: gang scheduling, quota and topology for GPU training clusters"};
  app.require_subcommand(1);
  int exit_code = 0;
  muster::cli::RegisterValidateCommand(app, exit_code);
  muster::cli::RegisterSimulateCommand(app, exit_code);
  muster::cli::RegisterSummaryCommand(app, exit_code);
  muster::cli::RegisterServeCommand(app, exit_code);
  muster::cli::RegisterKubeCommand(app, exit_code);
  muster::cli::RegisterExperimentCommand(app, exit_code);
  muster::cli::RegisterGenCommand(app, exit_code);
  muster::cli::RegisterBenchCommand(app, exit_code);
  muster::cli::RegisterClientCommands(app, exit_code);
  muster::cli::RegisterStoreCommands(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    // Usage errors exit 2 (CONTRACT section 3); --help exits 0.
    return rc == 0 ? 0 : 2;
  }
  return exit_code;
}

}  // namespace

// An exception no command handled is a bug: said, and exit 1, never an abort.
int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "muster: internal error: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "muster: internal error\n";
  }
  return 1;
}
