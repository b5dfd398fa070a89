// The HTTP fuzz target's harness (fuzz/http_api_harness.h) over its seed corpus and
// seeded mutations of it: what CI runs under ASan + UBSan on every change (the
// libFuzzer target itself needs clang; fuzz/README.md). A crash, a sanitizer report
// or a 500 InternalError fails the test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "../../fuzz/http_api_harness.h"

namespace muster::fuzz {
namespace {

std::vector<std::string> Corpus() {
  std::vector<std::filesystem::path> paths;
  for (const auto& e : std::filesystem::directory_iterator(
           std::filesystem::path(MUSTER_SOURCE_DIR) / "fuzz" / "http_corpus")) {
    paths.push_back(e.path());
  }
  std::sort(paths.begin(), paths.end());
  std::vector<std::string> out;
  for (const auto& p : paths) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    out.push_back(s.str());
  }
  return out;
}

int Feed(HttpApiHarness& harness, const std::string& bytes) {
  return harness.Run(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

TEST(HttpFuzzReplayTest, TheSeedCorpusIsHandledWholly) {
  HttpApiHarness harness;
  const auto corpus = Corpus();
  ASSERT_GE(corpus.size(), 10u);
  int handled = 0;
  for (const auto& input : corpus) handled += Feed(harness, input);
  // Every seed is well-formed HTTP: each of its requests reaches the handler.
  EXPECT_GE(handled, static_cast<int>(corpus.size()));
}

// What libFuzzer's mutators do most, deterministically: flip, insert, erase,
// duplicate, splice; numbers and structure characters are favoured, since they are
// where parsers and validators break.
std::string Mutate(const std::string& input, const std::string& other, std::mt19937_64& rng) {
  static const std::string kInteresting[] = {
      "0",    "-1",   "4294967296", "1e30", "9999999999999Ti",
      "\"",   "{",    "}",          "[",    "]",
      ":",    ",",    "\r\n",       "%",    "%00",
      "..",   "/",    "?",          "&",    "=",
      "null", "true", "\"\"",       "{}",   "[]",
      "\xff"};
  std::string s = input;
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    const size_t at = s.empty() ? 0 : rng() % s.size();
    switch (rng() % 6) {
      case 0:
        if (!s.empty()) s[at] = static_cast<char>(s[at] ^ (1 << (rng() % 8)));
        break;
      case 1:
        s.insert(at, kInteresting[rng() % std::size(kInteresting)]);
        break;
      case 2:
        s.erase(at, rng() % 16);
        break;
      case 3:
        s.insert(at, s.substr(at, rng() % 64));
        break;
      case 4:
        s = s.substr(0, at) + other.substr(other.empty() ? 0 : rng() % other.size());
        break;
      default:
        if (!s.empty()) s[at] = static_cast<char>(rng() % 256);
        break;
    }
  }
  return s;
}

TEST(HttpFuzzReplayTest, SeededMutationsNeitherCrashNorAnswerInternalError) {
  HttpApiHarness harness;
  const auto corpus = Corpus();
  ASSERT_FALSE(corpus.empty());
  // MUSTER_FUZZ_REPLAY_SEED and MUSTER_FUZZ_REPLAY_INPUTS run another or a longer
  // series by hand (a finding's seed and index reproduce it); CI runs the default.
  // MUSTER_FUZZ_REPLAY_LAST names a file that holds the input being fed, for a
  // finding that kills the process (a memory limit) before a test can report it.
  const char* last = std::getenv("MUSTER_FUZZ_REPLAY_LAST");
  const char* seed = std::getenv("MUSTER_FUZZ_REPLAY_SEED");
  const char* inputs = std::getenv("MUSTER_FUZZ_REPLAY_INPUTS");
  std::mt19937_64 rng(seed != nullptr ? std::strtoull(seed, nullptr, 10) : 20261125);
  const int kInputs = inputs != nullptr ? std::atoi(inputs) : 20000;
  int handled = 0;
  for (int i = 0; i < kInputs; ++i) {
    const std::string& a = corpus[rng() % corpus.size()];
    const std::string& b = corpus[rng() % corpus.size()];
    const std::string input = Mutate(a, b, rng);
    SCOPED_TRACE(testing::Message() << "input " << i);
    if (last != nullptr) std::ofstream(last, std::ios::binary | std::ios::trunc) << input;
    handled += Feed(harness, input);
  }
  // Most mutants must get past the parser, or the handler is not what is tested.
  EXPECT_GT(handled, kInputs / 3) << handled;
}

}  // namespace
}  // namespace muster::fuzz
