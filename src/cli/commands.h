// Subcommands of the muster binary. Each Register* adds one CLI11 subcommand whose
// callback sets the process exit code through `exit_code`.
#pragma once

namespace CLI {
class App;
}

namespace muster::cli {

void RegisterValidateCommand(CLI::App& app, int& exit_code);
void RegisterSimulateCommand(CLI::App& app, int& exit_code);
void RegisterSummaryCommand(CLI::App& app, int& exit_code);
void RegisterServeCommand(CLI::App& app, int& exit_code);
void RegisterKubeCommand(CLI::App& app, int& exit_code);
void RegisterExperimentCommand(CLI::App& app, int& exit_code);
void RegisterGenCommand(CLI::App& app, int& exit_code);
void RegisterBenchCommand(CLI::App& app, int& exit_code);
// apply, get, describe, delete, logs: a client of `muster serve` (client_commands.cc).
void RegisterClientCommands(CLI::App& app, int& exit_code);
// backup, restore: snapshots of serve's store (store_commands.cc).
void RegisterStoreCommands(CLI::App& app, int& exit_code);

}  // namespace muster::cli
