#include "core/flat_map.h"

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace muster {
namespace {

using Map = FlatMap<std::string, std::string>;

std::vector<std::string> Keys(const Map& m) {
  std::vector<std::string> keys;
  for (const auto& [k, v] : m) keys.push_back(k);
  return keys;
}

TEST(FlatMapTest, IteratesInKeyOrderAsStdMap) {
  Map m;
  std::map<std::string, std::string> ref;
  for (const char* k : {"nvidia.com/gpu", "cpu", "memory", "amd.com/gpu", "cpu"}) {
    m[k] = std::string("f-") + k;
    ref[k] = std::string("f-") + k;
  }
  ASSERT_EQ(m.size(), ref.size());
  auto it = m.begin();
  for (const auto& [k, v] : ref) {
    EXPECT_EQ(it->first, k);
    EXPECT_EQ(it->second, v);
    ++it;
  }
}

TEST(FlatMapTest, LookupsFindOnlyPresentKeys) {
  Map m{{"memory", "b"}, {"cpu", "a"}};
  EXPECT_EQ(m.at("cpu"), "a");
  EXPECT_EQ(m.count("memory"), 1u);
  EXPECT_EQ(m.count("pods"), 0u);
  EXPECT_TRUE(m.find("pods") == m.end());
  EXPECT_TRUE(m.contains("memory"));
  EXPECT_THROW(m.at("pods"), std::out_of_range);
  EXPECT_EQ(m.size(), 2u);  // no lookup inserted
}

TEST(FlatMapTest, InsertKeepsTheFirstValueAsStdMap) {
  Map m{{"cpu", "first"}, {"cpu", "second"}};
  EXPECT_EQ(m.at("cpu"), "first");
  auto [it, inserted] = m.emplace("cpu", "third");
  EXPECT_FALSE(inserted);
  EXPECT_EQ(it->second, "first");
  EXPECT_TRUE(m.insert({"gpu", "x"}).second);
  EXPECT_EQ(Keys(m), (std::vector<std::string>{"cpu", "gpu"}));
}

TEST(FlatMapTest, EraseAndClear) {
  Map m{{"a", "1"}, {"b", "2"}, {"c", "3"}};
  EXPECT_EQ(m.erase("b"), 1u);
  EXPECT_EQ(m.erase("b"), 0u);
  EXPECT_EQ(Keys(m), (std::vector<std::string>{"a", "c"}));
  m.clear();
  EXPECT_TRUE(m.empty());
  m["z"] = "9";
  EXPECT_EQ(Keys(m), (std::vector<std::string>{"z"}));
}

TEST(FlatMapTest, EqualityComparesEntries) {
  Map a{{"a", "1"}, {"b", "2"}};
  Map b;
  b["b"] = "2";
  b["a"] = "1";
  EXPECT_TRUE(a == b);
  b["a"] = "other";
  EXPECT_FALSE(a == b);
}

}  // namespace
}  // namespace muster
