#include "engine/record_table.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace muster::engine {
namespace {

model::Workload Named(const std::string& key) {
  model::Workload w;
  w.key = key;
  return w;
}

std::vector<std::string> Keys(const RecordTable& table) {
  std::vector<std::string> keys;
  for (const WorkloadRecord& r : table) keys.push_back(r.key());
  return keys;
}

TEST(RecordTable, KeepsAddOrderAndRefusesADuplicateKey) {
  RecordTable table;
  ASSERT_NE(table.Add(Named("ns/b")), nullptr);
  ASSERT_NE(table.Add(Named("ns/a")), nullptr);
  EXPECT_EQ(table.Add(Named("ns/b")), nullptr);
  EXPECT_EQ(Keys(table), (std::vector<std::string>{"ns/b", "ns/a"}));
  EXPECT_EQ(table.size(), 2u);
}

TEST(RecordTable, RemovalLeavesOrderAndLookupsOfTheRest) {
  RecordTable table;
  for (const char* k : {"a", "b", "c", "d"}) table.Add(Named(k));
  EXPECT_TRUE(table.Remove("b"));
  EXPECT_FALSE(table.Remove("b"));
  EXPECT_EQ(table.Find("b"), nullptr);
  EXPECT_EQ(Keys(table), (std::vector<std::string>{"a", "c", "d"}));
  ASSERT_NE(table.Find("d"), nullptr);
  EXPECT_EQ(table.Find("d")->key(), "d");
  EXPECT_EQ(table.size(), 3u);
  // A removed key may come back, at the end.
  table.Add(Named("b"));
  EXPECT_EQ(Keys(table), (std::vector<std::string>{"a", "c", "d", "b"}));
}

// Enough removals to compact the table several times: the survivors keep their
// addresses (the admitter reads their workloads in place), their order and their
// lookups.
TEST(RecordTable, CompactionMovesNoRecord) {
  RecordTable table;
  const int n = 1000;
  for (int i = 0; i < n; ++i) table.Add(Named("w" + std::to_string(i)));
  std::vector<const WorkloadRecord*> kept;
  for (int i = 0; i < n; ++i) {
    if (i % 10 == 9) kept.push_back(table.Find("w" + std::to_string(i)));
  }
  for (int i = 0; i < n; ++i) {
    if (i % 10 != 9) {
      ASSERT_TRUE(table.Remove("w" + std::to_string(i)));
    }
  }
  ASSERT_EQ(table.size(), kept.size());
  size_t at = 0;
  for (const WorkloadRecord& r : table) {
    ASSERT_LT(at, kept.size());
    EXPECT_EQ(&r, kept[at]);
    EXPECT_EQ(table.Find(r.key()), &r);
    ++at;
  }
  EXPECT_EQ(at, kept.size());
  EXPECT_EQ(table.Find("w0"), nullptr);
}

TEST(RecordTable, RemovingEveryRecordLeavesAnEmptyTable) {
  RecordTable table;
  for (int i = 0; i < 300; ++i) table.Add(Named(std::to_string(i)));
  for (int i = 299; i >= 0; --i) ASSERT_TRUE(table.Remove(std::to_string(i)));
  EXPECT_TRUE(table.empty());
  EXPECT_TRUE(table.begin() == table.end());
}

}  // namespace
}  // namespace muster::engine
