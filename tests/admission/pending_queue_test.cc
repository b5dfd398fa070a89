// PendingQueue against a model that moves every parked key between two sets at
// once: the queue keeps a cycle's parked heads as a counted front of its active
// set, and must answer every question as the model does.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "admission/cluster_queue.h"

namespace muster::admission {
namespace {

// What the queue stood for before the parked front: two sets, keys moved at once.
struct PendingModel {
  std::set<QueueKey> active, parked;
  void Push(const QueueKey& k) { active.insert(k); }
  void Erase(const QueueKey& k) {
    if (active.erase(k) == 0) parked.erase(k);
  }
  void Park(const QueueKey& k) {
    if (active.erase(k) > 0) parked.insert(k);
  }
  void ParkHead() {
    parked.insert(*active.begin());
    active.erase(active.begin());
  }
  void UnparkAll() {
    active.insert(parked.begin(), parked.end());
    parked.clear();
  }
  void Unpark(const QueueKey& k) {
    if (parked.erase(k) > 0) active.insert(k);
  }
};

std::vector<std::string> Keys(const std::vector<QueueKey>& v) {
  std::vector<std::string> out;
  for (const QueueKey& k : v) out.emplace_back(k.key);
  return out;
}

void ExpectSame(const PendingQueue& q, const PendingModel& m, int step) {
  SCOPED_TRACE("step " + std::to_string(step));
  std::vector<QueueKey> active(q.active().begin(), q.active().end());
  EXPECT_EQ(Keys(active), Keys({m.active.begin(), m.active.end()}));
  EXPECT_EQ(Keys(q.Parked()), Keys({m.parked.begin(), m.parked.end()}));
  std::vector<QueueKey> all(m.active.begin(), m.active.end());
  all.insert(all.end(), m.parked.begin(), m.parked.end());
  EXPECT_EQ(Keys(q.All()), Keys(all));
  EXPECT_EQ(q.HasParked(), !m.parked.empty());
  EXPECT_EQ(q.Size(), m.active.size() + m.parked.size());
  ASSERT_EQ(q.Head() == nullptr, m.active.empty());
  if (q.Head() != nullptr) {
    EXPECT_EQ(q.Head()->key, m.active.begin()->key);
  }
  std::set<QueueKey> every = m.active;
  every.insert(m.parked.begin(), m.parked.end());
  ASSERT_EQ(q.First() == nullptr, every.empty());
  if (q.First() != nullptr) {
    EXPECT_EQ(q.First()->key, every.begin()->key);
  }
}

TEST(PendingQueueTest, ParkedHeadsAnswerAsIfMovedOneByOne) {
  // Keys ordered by `order`; the views point into `names`, which outlive the queue.
  std::vector<std::string> names;
  for (int i = 0; i < 40; ++i) names.push_back("ns/wl-" + std::to_string(100 + i));
  auto key = [&](int i) {
    QueueKey k;
    k.priority = i % 3;
    k.order = i;
    k.key = names[static_cast<size_t>(i)];
    return k;
  };
  std::mt19937 rng(7);
  for (int round = 0; round < 300; ++round) {
    PendingQueue q;
    PendingModel m;
    for (int step = 0; step < 400; ++step) {
      const int i = static_cast<int>(rng() % names.size());
      switch (rng() % 8) {
        case 0:
        case 1:  // a workload is queued once (the admitter's precondition)
          if (m.active.count(key(i)) == 0 && m.parked.count(key(i)) == 0) {
            q.Push(key(i));
            m.Push(key(i));
          }
          break;
        case 2:
        case 3:  // what a cycle does most: park the head
          if (q.Head() != nullptr) {
            q.ParkHead();
            m.ParkHead();
          }
          break;
        case 4:
          q.Park(key(i));
          m.Park(key(i));
          break;
        case 5:
          q.Erase(key(i));
          m.Erase(key(i));
          break;
        case 6:
          if (rng() % 4 == 0) {
            q.UnparkAll();
            m.UnparkAll();
          } else {
            q.Unpark(key(i));
            m.Unpark(key(i));
          }
          break;
        case 7: {  // a copy keeps its own parked front
          PendingQueue copy = q;
          ExpectSame(copy, m, step);
          q = copy;
          break;
        }
      }
      ExpectSame(q, m, step);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

// Key `i` of four, "a" to "d", in that queue order.
QueueKey LetterKey(int i) {
  static const std::string kNames[] = {"a", "b", "c", "d"};
  QueueKey k;
  k.order = i;
  k.key = kNames[i];
  return k;
}

TEST(PendingQueueTest, PushBehindParkedHeadsIsTheNextHead) {
  PendingQueue q;
  q.Push(LetterKey(0));
  q.Push(LetterKey(1));
  q.ParkHead();
  q.ParkHead();
  EXPECT_EQ(q.Head(), nullptr);
  EXPECT_TRUE(q.HasParked());
  q.Push(LetterKey(3));  // after every parked key: active, the head
  ASSERT_NE(q.Head(), nullptr);
  EXPECT_EQ(q.Head()->key, "d");
  q.Push(LetterKey(2));  // between parked b and active d: the new head
  EXPECT_EQ(q.Head()->key, "c");
  EXPECT_EQ(Keys(q.Parked()), (std::vector<std::string>{"a", "b"}));
  q.UnparkAll();
  EXPECT_EQ(q.Head()->key, "a");
  EXPECT_FALSE(q.HasParked());
}

TEST(PendingQueueTest, KeysAheadOfParkedOnesKeepQueueOrderOnceThoseGo) {
  PendingQueue q;
  q.Push(LetterKey(2));
  q.Push(LetterKey(3));
  q.ParkHead();
  q.ParkHead();
  q.Push(LetterKey(1));  // ahead of the parked c and d: active, the head
  EXPECT_EQ(q.Head()->key, "b");
  q.Erase(LetterKey(2));
  q.Erase(LetterKey(3));  // no parked key left
  EXPECT_FALSE(q.HasParked());
  q.Push(LetterKey(0));  // ahead of b
  EXPECT_EQ(q.Head()->key, "a");
  std::vector<QueueKey> active(q.active().begin(), q.active().end());
  EXPECT_EQ(Keys(active), (std::vector<std::string>{"a", "b"}));
}

}  // namespace
}  // namespace muster::admission
