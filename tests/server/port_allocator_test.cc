#include "server/port_allocator.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace muster::server {
namespace {

// Listens on 127.0.0.1:port like a job's store would (SO_REUSEADDR, so connections
// of earlier jobs in TIME_WAIT do not matter); -1 when the port is taken.
int Occupy(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || ::listen(fd, 1) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

TEST(PickFreePortTest, SkipsReservedAndBusyPorts) {
  Result<int> free_port = PickFreePort(29500, {});
  ASSERT_TRUE(free_port.ok()) << free_port.status().ToString();
  int busy = *free_port;
  int fd = Occupy(busy);
  ASSERT_GE(fd, 0);

  Result<int> next = PickFreePort(busy, {busy + 1});
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_GT(*next, busy + 1);  // busy is bound, busy + 1 is reserved
  ::close(fd);
}

TEST(PickFreePortTest, RejectsPortsOutOfRange) {
  EXPECT_EQ(PickFreePort(0, {}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(PickFreePort(70000, {}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(PickFreePort(65535, {65535}).status().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace muster::server
