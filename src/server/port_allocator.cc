#include "server/port_allocator.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace muster::server {
namespace {

constexpr int kMaxPort = 65535;

bool CanBind(in_addr_t address, int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  // As a job's TCP store will: a port held only by TIME_WAIT connections is usable.
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(address);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

Result<int> PickFreePort(int first, const std::set<int>& reserved) {
  if (first < 1 || first > kMaxPort) {
    return InvalidArgument("first port " + std::to_string(first) + " is outside 1..65535");
  }
  for (int port = first; port <= kMaxPort; ++port) {
    if (reserved.count(port) != 0) continue;
    if (CanBind(INADDR_LOOPBACK, port) && CanBind(INADDR_ANY, port)) return port;
  }
  return Status(StatusCode::kUnavailable,
                "no free TCP port in " + std::to_string(first) + "..65535");
}

}  // namespace muster::server
