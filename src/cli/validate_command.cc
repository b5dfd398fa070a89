// muster validate -f PATH...: decode and validate, one line per problem (CONTRACT 2).
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "api/decode.h"
#include "cli/commands.h"

namespace muster::cli {

void RegisterValidateCommand(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("validate", "Decode and validate manifests");
  // Owned by the callback: CLI11 keeps the subcommand (and this) alive until exit.
  auto paths = std::make_shared<std::vector<std::string>>();
  cmd->add_option("-f,--filename", *paths,
                  "Manifest file, directory (recursive, name order) or - for stdin; repeatable")
      ->required()
      ->take_all();
  cmd->callback([paths, &exit_code] {
    api::DecodeResult result = api::LoadPaths(*paths, /*warn_unread_fields=*/true);
    for (const auto& d : result.diagnostics) std::cout << d.ToString() << '\n';
    std::cout.flush();
    exit_code = result.HasErrors() ? 1 : 0;
  });
}

}  // namespace muster::cli
