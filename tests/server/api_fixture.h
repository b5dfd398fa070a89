// A store in a temporary directory behind an ApiHandler, and Call() to send it one
// request the way http_server.cc would: for tests of the API's semantics without a
// network.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "server/api_handler.h"

namespace muster::server::testing {

class ApiFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("muster-api-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    auto opened = ObjectStore::Open(dir_.string());
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(opened).value();
    handler_ = std::make_unique<ApiHandler>(*store_, "127.0.0.1:1");
  }
  void TearDown() override {
    handler_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  // `path` may carry a query ("?dryRun=All"); values are not percent-decoded.
  ApiResponse Call(std::string method, std::string path, std::string body = "",
                   std::string content_type = "application/json",
                   std::string accept = "application/json") {
    ApiRequest r;
    r.method = std::move(method);
    if (auto q = path.find('?'); q != std::string::npos) {
      std::string query = path.substr(q + 1);
      path.resize(q);
      for (size_t pos = 0; pos <= query.size();) {
        size_t amp = query.find('&', pos);
        if (amp == std::string::npos) amp = query.size();
        std::string kv = query.substr(pos, amp - pos);
        auto eq = kv.find('=');
        if (!kv.empty())
          r.query[kv.substr(0, eq)] = eq == std::string::npos ? "" : kv.substr(eq + 1);
        pos = amp + 1;
      }
    }
    r.path = std::move(path);
    r.body = std::move(body);
    r.content_type = std::move(content_type);
    r.accept = std::move(accept);
    auto result = handler_->Handle(r);
    auto* resp = std::get_if<ApiResponse>(&result);
    return resp ? *resp : ApiResponse{-1, "", "stream"};
  }

  static nlohmann::json Body(const ApiResponse& r) {
    return nlohmann::json::parse(r.body, nullptr, false);
  }

  std::filesystem::path dir_;
  std::unique_ptr<ObjectStore> store_;
  std::unique_ptr<ApiHandler> handler_;
};

}  // namespace muster::server::testing
