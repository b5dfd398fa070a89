// The HTTP/1.1 request parser: framing, limits and the status each violation gets.
#include "server/http_parser.h"

#include <gtest/gtest.h>

#include <string>

namespace muster::server {
namespace {

using State = HttpRequestParser::State;

// Feeds `bytes` in pieces of `step` and returns the final state.
State FeedInSteps(HttpRequestParser& p, const std::string& bytes, size_t step,
                  std::string* rest = nullptr) {
  std::string buffer;
  State s = State::kNeedMore;
  for (size_t i = 0; i < bytes.size(); i += step) {
    buffer += bytes.substr(i, step);
    do {
      s = p.Parse(buffer);
    } while (s == State::kHeadersDone);
    if (s == State::kComplete || s == State::kError) break;
  }
  if (rest != nullptr) *rest = buffer;
  return s;
}

TEST(HttpParser, ParsesARequestFedByteByByte) {
  const std::string raw =
      "POST /api/v1/namespaces/a%20b/pods?watch=1&labelSelector=a%3Db&x=1&x=2&q=a+b HTTP/1.1\r\n"
      "Host: h\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{\"a\":1}";
  for (size_t step : {1u, 3u, 1000u}) {
    HttpRequestParser p;
    ASSERT_EQ(FeedInSteps(p, raw, step), State::kComplete) << step;
    const HttpRequest& r = p.request();
    EXPECT_EQ(r.method, "POST");
    EXPECT_EQ(r.path, "/api/v1/namespaces/a b/pods");
    EXPECT_EQ(r.query.at("watch"), "1");
    EXPECT_EQ(r.query.at("labelSelector"), "a=b");
    EXPECT_EQ(r.query.at("x"), "1");  // the first value wins
    EXPECT_EQ(r.query.at("q"), "a b");
    EXPECT_EQ(r.Header("content-type"), "application/json");
    EXPECT_EQ(r.body, "{\"a\":1}");
    EXPECT_TRUE(r.keep_alive);
  }
}

TEST(HttpParser, ChunkedBodiesAndPipelining) {
  const std::string raw =
      "PUT /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
      "4;ext=1\r\nabcd\r\n3\r\nefg\r\n0\r\nTrailer: x\r\n\r\n"
      "GET /next HTTP/1.1\r\n\r\n";
  for (size_t step : {1u, 1000u}) {
    HttpRequestParser p;
    std::string rest;
    ASSERT_EQ(FeedInSteps(p, raw, step, &rest), State::kComplete);
    EXPECT_EQ(p.request().body, "abcdefg");
    HttpRequest first = p.TakeRequest();
    EXPECT_EQ(first.method, "PUT");
    // The pipelined request was left in the buffer (fed whole) or arrives next.
    std::string more = step == 1 ? "GET /next HTTP/1.1\r\n\r\n" : rest;
    if (step == 1) rest.clear();
    ASSERT_EQ(p.Parse(more), State::kComplete);
    EXPECT_EQ(p.request().path, "/next");
  }
}

TEST(HttpParser, ConnectionSemantics) {
  HttpRequestParser p;
  std::string b = "GET / HTTP/1.0\r\n\r\n";
  ASSERT_EQ(p.Parse(b), State::kComplete);
  EXPECT_FALSE(p.request().keep_alive);
  p.Reset();
  b = "GET / HTTP/1.1\r\nConnection: close\r\n\r\n";
  ASSERT_EQ(p.Parse(b), State::kComplete);
  EXPECT_FALSE(p.request().keep_alive);
  p.Reset();
  b = "POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n";
  ASSERT_EQ(p.Parse(b), State::kHeadersDone);
  EXPECT_TRUE(p.request().expect_continue);
  ASSERT_EQ(p.Parse(b), State::kNeedMore);
  b = "hi";
  ASSERT_EQ(p.Parse(b), State::kComplete);
  EXPECT_EQ(p.request().body, "hi");
}

struct BadCase {
  std::string raw;
  int status;
};

TEST(HttpParser, HostileInputGetsTheRightStatus) {
  HttpLimits limits;
  limits.max_header_bytes = 1024;
  limits.max_body_bytes = 100;
  limits.max_headers = 10;
  std::string many_headers = "GET / HTTP/1.1\r\n";
  for (int i = 0; i < 11; ++i) many_headers += "X-" + std::to_string(i) + ": v\r\n";
  const BadCase cases[] = {
      {"GET /" + std::string(2000, 'a'), 414},
      {"GET / HTTP/1.1\r\nX: " + std::string(2000, 'a') + "\r\n\r\n", 431},
      {many_headers + "\r\n", 431},
      {"POST / HTTP/1.1\r\nContent-Length: 101\r\n\r\n", 413},
      {"POST / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n65\r\n", 413},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n" + std::string(2000, '1'), 400},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n", 400},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501},
      {"GET / HTTP/2.0\r\n\r\n", 505},
      {"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505},
      {"GET / FTP/1.1\r\n\r\n", 400},
      {"GET /%zz HTTP/1.1\r\n\r\n", 400},
      {"GET /%00 HTTP/1.1\r\n\r\n", 400},
      {"GET relative HTTP/1.1\r\n\r\n", 400},
      {"G(T / HTTP/1.1\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\n folded\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\nNo colon\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\nBad Name: v\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\nExpect: teapot\r\nContent-Length: 1\r\n\r\n", 417},
      {"GET  /  HTTP/1.1\r\n\r\n", 400},
  };
  for (const auto& c : cases) {
    HttpRequestParser p(limits);
    EXPECT_EQ(FeedInSteps(p, c.raw, 1000), State::kError) << c.raw.substr(0, 80);
    EXPECT_EQ(p.status(), c.status) << c.raw.substr(0, 80) << " -> " << p.error();
    EXPECT_FALSE(p.error().empty());
  }
}

TEST(HttpParser, ResponseFraming) {
  EXPECT_EQ(ResponseHead(200, {{"Content-Type", "text/plain"}}, 2, true),
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\n");
  EXPECT_EQ(ResponseHead(413, {}, std::nullopt, false),
            "HTTP/1.1 413 Request Entity Too Large\r\nTransfer-Encoding: chunked\r\n"
            "Connection: close\r\n\r\n");
  EXPECT_EQ(Chunk("hello, world"), "c\r\nhello, world\r\n");
  EXPECT_EQ(Chunk(""), "0\r\n\r\n");
}

}  // namespace
}  // namespace muster::server
