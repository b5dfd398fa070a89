// The dashboard's static surface: routing under /ui, content types, and that every
// file the page loads is embedded in the binary.
#include "ui/dashboard.h"

#include <gtest/gtest.h>

#include <regex>

#include "ui/assets.h"

namespace muster::ui {
namespace {

TEST(DashboardTest, ServesThePageAndAssets) {
  auto page = ServeDashboard("GET", "/ui/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->code, 200);
  EXPECT_EQ(page->content_type, "text/html; charset=utf-8");
  EXPECT_NE(page->body.find("<title>muster</title>"), std::string_view::npos);
  EXPECT_EQ(ServeDashboard("GET", "/ui")->body, page->body);
  auto js = ServeDashboard("GET", "/ui/core.js");
  ASSERT_TRUE(js);
  EXPECT_EQ(js->code, 200);
  EXPECT_EQ(js->content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(ServeDashboard("HEAD", "/ui/app.css")->content_type, "text/css; charset=utf-8");
  EXPECT_EQ(ServeDashboard("GET", "/ui/favicon.svg")->content_type, "image/svg+xml");
}

TEST(DashboardTest, OnlyItsOwnPathsAndOnlyReads) {
  EXPECT_FALSE(ServeDashboard("GET", "/api/v1/pods"));
  EXPECT_FALSE(ServeDashboard("GET", "/uix"));
  EXPECT_FALSE(ServeDashboard("GET", "/"));
  EXPECT_EQ(ServeDashboard("GET", "/ui/nope.js")->code, 404);
  EXPECT_EQ(ServeDashboard("GET", "/ui/../etc/passwd")->code, 404);
  EXPECT_EQ(ServeDashboard("GET", "/ui/a/core.js")->code, 404);
  EXPECT_EQ(ServeDashboard("POST", "/ui/")->code, 405);
  EXPECT_EQ(ServeDashboard("DELETE", "/ui/core.js")->code, 405);
}

TEST(DashboardTest, EveryFileThePageLoadsIsEmbedded) {
  const std::string page(ServeDashboard("GET", "/ui/")->body);
  std::regex ref(R"re((?:src|href)="/ui/([^"]+)")re");
  int found = 0;
  for (auto it = std::sregex_iterator(page.begin(), page.end(), ref); it != std::sregex_iterator();
       ++it) {
    const std::string name = (*it)[1];
    EXPECT_NE(FindAsset(name), nullptr) << name;
    ++found;
  }
  EXPECT_GT(found, 5);
  // Nothing from elsewhere: no CDN, no external fonts.
  // (The SVG namespace name is an identifier, never fetched.)
  for (const auto& a : EmbeddedAssets()) {
    std::string data(a.data);
    for (size_t at = data.find("http"); at != std::string::npos; at = data.find("http", at + 1)) {
      if (data.compare(at, 7, "http://") != 0 && data.compare(at, 8, "https://") != 0) continue;
      EXPECT_EQ(data.compare(at, 26, "http://www.w3.org/2000/svg"), 0)
          << a.name << ": " << data.substr(at, 60);
    }
  }
}

TEST(DashboardTest, AssetsSortedForLookup) {
  const auto& assets = EmbeddedAssets();
  for (size_t i = 1; i < assets.size(); ++i) EXPECT_LT(assets[i - 1].name, assets[i].name);
}

}  // namespace
}  // namespace muster::ui
