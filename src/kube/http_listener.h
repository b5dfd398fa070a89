// Starting an httplib listener on a thread of its own, shared by the admission
// webhook's HTTPS listener and the dashboard's.
#pragma once

#include <string>
#include <thread>

#include "core/status.h"

namespace httplib {
class Server;
}

namespace muster::kube {

// Binds `server` to host:port (port 0: any free port) and runs its accept loop on
// `thread`; returns the bound port once the loop accepts (httplib's stop() does nothing
// before that, so a Stop() right after a start would leave the thread serving).
// kUnavailable when the address cannot be bound. `server` must outlive the thread.
Result<int> ListenOnThread(httplib::Server& server, const std::string& host, int port,
                           std::thread& thread);

}  // namespace muster::kube
