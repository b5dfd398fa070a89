// Every upstream sample and every conformance input decodes without errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "api/decode.h"

namespace muster::api {
namespace {

namespace fs = std::filesystem;

std::string Joined(const DecodeResult& r) {
  std::string s;
  for (const auto& d : r.diagnostics) {
    if (!d.warning) s += d.ToString() + "\n";
  }
  return s;
}

TEST(SharedManifests, UpstreamSamplesHaveNoErrors) {
  fs::path dir = fs::path(MUSTER_SHARED_DIR) / "upstream-manifests";
  ASSERT_TRUE(fs::is_directory(dir)) << dir;
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    ++files;
    DecodeResult r = LoadPaths({e.path().string()});
    EXPECT_FALSE(r.HasErrors()) << Joined(r);
  }
  EXPECT_GT(files, 10);
}

TEST(SharedManifests, ConformanceInputsHaveNoErrors) {
  fs::path dir = fs::path(MUSTER_SHARED_DIR) / "conformance" / "cases";
  ASSERT_TRUE(fs::is_directory(dir)) << dir;
  int cases = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    fs::path input = e.path() / "input";
    if (!fs::is_directory(input)) continue;
    ++cases;
    DecodeResult r = LoadPaths({input.string()});
    EXPECT_FALSE(r.HasErrors()) << e.path() << "\n" << Joined(r);
    EXPECT_FALSE(r.manifests.nodes.empty()) << e.path();
    for (const auto& d : r.diagnostics) ADD_FAILURE() << "unexpected: " << d.ToString();
  }
  EXPECT_GE(cases, 10);
}

}  // namespace
}  // namespace muster::api
