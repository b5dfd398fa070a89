#include "sim/event_queue.h"

#include <gtest/gtest.h>

#include "sim/result.h"

namespace muster::sim {
namespace {

TEST(EventQueueTest, OrdersByTimeThenKindThenScheduling) {
  EventQueue q;
  q.Push(10, EventKind::kSubmit, "late");
  q.Push(0, EventKind::kSubmit, "first-submitted");
  q.Push(0, EventKind::kSubmit, "second-submitted");
  q.Push(0, EventKind::kFinish, "finish");
  q.Push(0, EventKind::kNodeFail, "node");
  std::vector<std::string> order;
  while (!q.empty()) order.push_back(q.Pop().target);
  EXPECT_EQ(order, (std::vector<std::string>{"finish", "node", "first-submitted",
                                             "second-submitted", "late"}));
}

TEST(ComputeStatsTest, NearestRankPercentiles) {
  Stats s = ComputeStats({4, 1, 3, 2});
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_DOUBLE_EQ(s.p50, 2);
  EXPECT_DOUBLE_EQ(s.p99, 4);
  Stats empty = ComputeStats({});
  EXPECT_DOUBLE_EQ(empty.mean, 0);
  EXPECT_DOUBLE_EQ(empty.p99, 0);
}

}  // namespace
}  // namespace muster::sim
