// HttpRequestParser: HTTP/1.1 requests read incrementally from a connection's bytes,
// with every quantity bounded (request line, header block, header count, body,
// chunk sizes), so that a hostile client costs at most the limits' memory and is
// answered with the status upstream servers use (400, 413, 414, 431, 501, 505).
// Transport-free: the server and the fuzz target feed it the same way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace muster::server {

struct HttpLimits {
  // Go's net/http reads at most 1 MiB of headers; kubectl sends ~1 KiB, a bearer
  // token (a JWT) a few KiB. 64 KiB bounds a slow client's buffer per connection.
  size_t max_header_bytes = 64 << 10;
  size_t max_headers = 128;
  // kube-apiserver's --max-request-body-bytes default (3 MiB, 413 above it); the
  // largest object etcd stores is 1.5 MiB.
  size_t max_body_bytes = 3 << 20;
};

struct HttpRequest {
  std::string method;
  std::string target;  // as sent: path and query
  std::string path;    // percent-decoded, without the query
  // Decoded query parameters ('+' is a space); the first of repeated keys wins.
  std::map<std::string, std::string> query;
  // Header names lower-cased, in the order received.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  int minor_version = 1;  // HTTP/1.<minor>
  bool keep_alive = true;
  bool expect_continue = false;  // "Expect: 100-continue" with a body to come

  // The first header named `name` (lower case); "" when absent.
  std::string_view Header(std::string_view name) const;
};

class HttpRequestParser {
 public:
  enum class State { kNeedMore, kHeadersDone, kComplete, kError };

  explicit HttpRequestParser(HttpLimits limits = {}) : limits_(limits) {}

  // Consumes bytes from the front of `buffer` (erasing what it used) and returns:
  // kNeedMore (everything consumed, the request is not complete), kHeadersDone once
  // per request when the header block is parsed and a body follows (the caller may
  // answer "100 Continue" then, and calls Parse again), kComplete (request() is
  // ready; bytes of a pipelined next request stay in `buffer`), or kError (status()
  // and error() say why; the connection must be closed after answering).
  State Parse(std::string& buffer);

  const HttpRequest& request() const { return request_; }
  HttpRequest TakeRequest();
  int status() const { return status_; }
  const std::string& error() const { return error_; }
  // The header block of the current request has been parsed (its body may follow).
  bool headers_done() const { return phase_ != Phase::kHeaders; }
  // Ready for the next request on the same connection.
  void Reset();

 private:
  enum class Phase { kHeaders, kBody, kChunkSize, kChunkData, kChunkDataEnd, kTrailers, kDone };

  State Fail(int status, std::string error);
  State ParseHead(std::string_view head);
  State ParseBody(std::string& buffer);

  HttpLimits limits_;
  HttpRequest request_;
  Phase phase_ = Phase::kHeaders;
  size_t scanned_ = 0;           // bytes of the buffer already searched for the head's end
  uint64_t body_remaining_ = 0;  // Content-Length or the current chunk's bytes left
  bool headers_reported_ = false;
  int status_ = 0;
  std::string error_;
};

// Percent-decodes a path ("%2F" stays decoded as "/": routing splits after). False
// on a malformed escape.
bool PercentDecode(std::string_view in, bool plus_is_space, std::string& out);
// A query string's pairs, decoded, in order, repeated keys kept (exec's `command`).
std::vector<std::pair<std::string, std::string>> ParseQueryPairs(std::string_view query);

// The reason phrase of an HTTP status code ("Not Found").
std::string_view ReasonPhrase(int code);

// One response head: status line, the given headers, Content-Length when
// `content_length` is set, else "Transfer-Encoding: chunked"; Connection: close
// when !keep_alive.
std::string ResponseHead(int code, const std::vector<std::pair<std::string, std::string>>& headers,
                         std::optional<size_t> content_length, bool keep_alive);
// One chunk of a chunked body; an empty `data` is the last chunk ("0\r\n\r\n").
std::string Chunk(std::string_view data);

}  // namespace muster::server
