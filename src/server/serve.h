// RunServe: the `muster serve` process. Opens the store under --data, loads the -f
// manifests that are not there yet, starts the controllers, serves the API until
// SIGTERM/SIGINT, then shuts down in reverse order.
//
// Engine/executor seam: the engine and the local executor (issue 7, second half)
// plug in as Controllers. Start() gets the open, seeded store before the API takes
// requests; a controller subscribes to store.hub() (every committed change, in
// resourceVersion order; queue it and return), lists the current objects, and runs
// its own thread, writing decisions back through the store (Create / Update with
// WriteScope::kStatus). Stop() is called after the API has stopped serving.
#pragma once

#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "server/auth/serve_auth.h"
#include "server/object_store.h"

namespace muster::server {

class MetricsRegistry;  // server/metrics.h
class ApiHandler;       // server/api_handler.h
}  // namespace muster::server
namespace muster::ui {
class ViewPublisher;  // ui/view_publisher.h
}  // namespace muster::ui
namespace muster::server {

// What a controller gets at start: the open, seeded store, the data directory (pod
// working directories and logs live under it) and the registry /metrics renders.
struct ServeContext {
  ObjectStore& store;
  std::string data_dir;
  MetricsRegistry* metrics = nullptr;
  // Where the scheduler publishes its view (the dashboard's muster.dev resources).
  ui::ViewPublisher* views = nullptr;
  // The API as in-process callers use it (a controller creating objects as a user's
  // would be: defaults, validation, quota).
  ApiHandler* api = nullptr;
};

class Controller {
 public:
  virtual ~Controller() = default;
  virtual std::string name() const = 0;
  virtual Status Start(ServeContext& context) = 0;
  virtual void Stop() = 0;
};

struct ServeOptions {
  std::string data_dir;
  std::string listen = "127.0.0.1:8080";  // port 0: any free port (printed at start)
  std::vector<std::string> manifests;     // -f paths: files, directories, "-"
  // Without -f and with no Node stored: register this machine as the one Node
  // (cpu, memory, GPUs, NUMA; local_node.h).
  bool local_node = true;
  // TLS and authentication (auth/serve_auth.h); none: loopback only, every request
  // is the server's user.
  auth::AuthOptions auth;
};

// Returns 1 when the store, the manifests or the listen address are unusable. After a
// clean shutdown it does not return: it ends the process with exit code 0 (_Exit,
// once the store is closed) instead of freeing its state object by object.
int RunServe(const ServeOptions& options, std::vector<std::unique_ptr<Controller>> controllers,
             std::ostream& out, std::ostream& err);

}  // namespace muster::server
