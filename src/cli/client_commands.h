// The client commands' registration, one file each for the larger ones; main()
// calls RegisterClientCommands (commands.h), which calls these.
#pragma once

namespace CLI {
class App;
}

namespace muster::cli {

void RegisterGetCommand(CLI::App& app, int& exit_code);       // client_get.cc
void RegisterDescribeCommand(CLI::App& app, int& exit_code);  // client_describe.cc

}  // namespace muster::cli
