#include "server/http_parser.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "core/text.h"

namespace muster::server {
namespace {

// A chunk-size line ("1a;ext=v") longer than this is hostile.
constexpr size_t kMaxChunkLine = 1024;

bool IsTokenChar(char c) {
  // RFC 9110 tchar.
  if (std::isalnum(static_cast<unsigned char>(c))) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Does a comma-separated header value contain `token` (case-insensitive)?
bool HasToken(std::string_view value, std::string_view token) {
  size_t pos = 0;
  while (pos <= value.size()) {
    size_t comma = value.find(',', pos);
    if (comma == std::string_view::npos) comma = value.size();
    if (AsciiLower(Trim(value.substr(pos, comma - pos))) == token) return true;
    pos = comma + 1;
  }
  return false;
}

void ParseQuery(std::string_view query, std::map<std::string, std::string>& out) {
  for (auto& [key, value] : ParseQueryPairs(query)) {
    out.emplace(std::move(key), std::move(value));  // first value wins
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> ParseQueryPairs(std::string_view query) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t pos = 0;
  while (pos < query.size()) {
    size_t amp = query.find('&', pos);
    if (amp == std::string_view::npos) amp = query.size();
    std::string_view pair = query.substr(pos, amp - pos);
    pos = amp + 1;
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    std::string key, value;
    // A malformed pair is dropped, as Go's url.ParseQuery callers see it.
    if (!PercentDecode(pair.substr(0, eq), true, key)) continue;
    if (eq != std::string_view::npos && !PercentDecode(pair.substr(eq + 1), true, value)) continue;
    out.emplace_back(std::move(key), std::move(value));
  }
  return out;
}

std::string_view HttpRequest::Header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (k == name) return v;
  }
  return {};
}

bool PercentDecode(std::string_view in, bool plus_is_space, std::string& out) {
  out.clear();
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '%') {
      if (i + 2 >= in.size()) return false;
      const int hi = HexValue(in[i + 1]), lo = HexValue(in[i + 2]);
      if (hi < 0 || lo < 0) return false;
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return true;
}

HttpRequestParser::State HttpRequestParser::Fail(int status, std::string error) {
  phase_ = Phase::kDone;
  status_ = status;
  error_ = std::move(error);
  return State::kError;
}

void HttpRequestParser::Reset() {
  request_ = HttpRequest();
  phase_ = Phase::kHeaders;
  scanned_ = 0;
  body_remaining_ = 0;
  headers_reported_ = false;
  status_ = 0;
  error_.clear();
}

HttpRequest HttpRequestParser::TakeRequest() {
  HttpRequest out = std::move(request_);
  Reset();
  return out;
}

HttpRequestParser::State HttpRequestParser::Parse(std::string& buffer) {
  if (status_ != 0) return State::kError;
  if (phase_ == Phase::kHeaders) {
    // Empty lines before a request line are ignored (RFC 9112 2.2).
    size_t lead = 0;
    while (scanned_ == 0 && lead < buffer.size() &&
           (buffer[lead] == '\r' || buffer[lead] == '\n')) {
      ++lead;
    }
    if (lead > 0) buffer.erase(0, lead);
    // The head ends at an empty line: "\n\n" or "\n\r\n".
    size_t end = std::string::npos, body_start = 0;
    for (size_t i = scanned_ > 2 ? scanned_ - 2 : 0; i < buffer.size(); ++i) {
      if (buffer[i] != '\n') continue;
      if (i + 1 < buffer.size() && buffer[i + 1] == '\n') {
        end = i + 1;
        body_start = i + 2;
        break;
      }
      if (i + 2 < buffer.size() && buffer[i + 1] == '\r' && buffer[i + 2] == '\n') {
        end = i + 1;
        body_start = i + 3;
        break;
      }
    }
    if (end == std::string::npos) {
      scanned_ = buffer.size();
      if (buffer.size() > limits_.max_header_bytes) {
        if (buffer.find('\n') == std::string::npos) {
          return Fail(414, "the request line is longer than " +
                               std::to_string(limits_.max_header_bytes) + " bytes");
        }
        return Fail(431, "the request headers are longer than " +
                             std::to_string(limits_.max_header_bytes) + " bytes");
      }
      return State::kNeedMore;
    }
    if (end > limits_.max_header_bytes) {
      return Fail(431, "the request headers are longer than " +
                           std::to_string(limits_.max_header_bytes) + " bytes");
    }
    State s = ParseHead(std::string_view(buffer).substr(0, end));
    buffer.erase(0, body_start);
    scanned_ = 0;
    if (s == State::kError) return s;
    if (phase_ == Phase::kDone) return State::kComplete;
    if (!headers_reported_) {
      headers_reported_ = true;
      return State::kHeadersDone;
    }
  }
  return ParseBody(buffer);
}

HttpRequestParser::State HttpRequestParser::ParseHead(std::string_view head) {
  HttpRequest& r = request_;
  size_t eol = head.find('\n');
  std::string_view line = Trim(head.substr(0, eol));
  head.remove_prefix(eol == std::string_view::npos ? head.size() : eol + 1);
  // Request line: METHOD SP target SP HTTP/1.x
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    return Fail(400, "malformed request line");
  }
  r.method = std::string(line.substr(0, sp1));
  if (r.method.empty() || !std::all_of(r.method.begin(), r.method.end(), IsTokenChar)) {
    return Fail(400, "malformed request method");
  }
  r.target = std::string(line.substr(sp1 + 1, sp2 - sp1 - 1));
  const std::string_view version = line.substr(sp2 + 1);
  if (version == "HTTP/1.1") {
    r.minor_version = 1;
  } else if (version == "HTTP/1.0") {
    r.minor_version = 0;
    r.keep_alive = false;
  } else if (version.substr(0, 5) == "HTTP/") {
    return Fail(
        505, "HTTP version " + std::string(version.substr(5)) + " is not supported (HTTP/1.1 is)");
  } else {
    return Fail(400, "malformed HTTP version");
  }
  std::string_view target = r.target;
  // Absolute form (a proxy's "http://host/path"): the path is what routes.
  if (target.substr(0, 7) == "http://" || target.substr(0, 8) == "https://") {
    size_t slash = target.find('/', target.find("//") + 2);
    target = slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
  }
  if (target.empty() || (target[0] != '/' && target != "*")) {
    return Fail(400, "the request target must be an absolute path");
  }
  const size_t q = target.find('?');
  if (!PercentDecode(target.substr(0, q), false, r.path)) {
    return Fail(400, "malformed percent-encoding in the request path");
  }
  if (r.path.find('\0') != std::string::npos) return Fail(400, "NUL in the request path");
  if (q != std::string_view::npos) ParseQuery(target.substr(q + 1), r.query);

  // Header fields.
  // A copy: a view into r.headers would dangle when the vector grows.
  std::string content_length;
  bool chunked = false;
  while (!head.empty()) {
    eol = head.find('\n');
    std::string_view h = head.substr(0, eol);
    head.remove_prefix(eol == std::string_view::npos ? head.size() : eol + 1);
    if (!h.empty() && h.back() == '\r') h.remove_suffix(1);
    if (h.empty()) continue;
    if (h[0] == ' ' || h[0] == '\t') return Fail(400, "obsolete header line folding");
    const size_t colon = h.find(':');
    if (colon == std::string_view::npos || colon == 0) return Fail(400, "malformed header line");
    const std::string_view name = h.substr(0, colon);
    if (!std::all_of(name.begin(), name.end(), IsTokenChar)) {
      return Fail(400, "malformed header name");
    }
    if (r.headers.size() >= limits_.max_headers) {
      return Fail(431, "more than " + std::to_string(limits_.max_headers) + " request headers");
    }
    r.headers.emplace_back(AsciiLower(name), std::string(Trim(h.substr(colon + 1))));
    const auto& [key, value] = r.headers.back();
    if (key == "content-length") {
      if (!content_length.empty() && content_length != value) {
        return Fail(400, "conflicting Content-Length headers");
      }
      content_length = value;
    } else if (key == "transfer-encoding") {
      if (AsciiLower(value) != "chunked") {
        return Fail(501, "Transfer-Encoding " + value + " is not supported (chunked is)");
      }
      chunked = true;
    } else if (key == "connection") {
      if (HasToken(value, "close")) r.keep_alive = false;
      if (HasToken(value, "keep-alive") && r.minor_version == 0) r.keep_alive = true;
    }
  }
  if (chunked && !content_length.empty()) {
    // Both framings at once is how requests are smuggled past proxies.
    return Fail(400, "both Transfer-Encoding and Content-Length are set");
  }
  bool has_body = chunked;
  if (!content_length.empty()) {
    if (content_length.size() > 19 || !std::all_of(content_length.begin(), content_length.end(),
                                                   [](char c) { return c >= '0' && c <= '9'; })) {
      return Fail(400, "malformed Content-Length");
    }
    body_remaining_ = std::stoull(std::string(content_length));
    if (body_remaining_ > limits_.max_body_bytes) {
      return Fail(413, "the request body is " + std::string(content_length) +
                           " bytes; the limit is " + std::to_string(limits_.max_body_bytes));
    }
    has_body = body_remaining_ > 0;
  }
  const std::string_view expect = r.Header("expect");
  if (!expect.empty()) {
    if (AsciiLower(expect) != "100-continue")
      return Fail(417, "unsupported Expect: " + std::string(expect));
    r.expect_continue = has_body;
  }
  if (!has_body) {
    phase_ = Phase::kDone;
  } else {
    phase_ = chunked ? Phase::kChunkSize : Phase::kBody;
    r.body.reserve(std::min<uint64_t>(body_remaining_, 1 << 20));
  }
  return State::kNeedMore;
}

HttpRequestParser::State HttpRequestParser::ParseBody(std::string& buffer) {
  HttpRequest& r = request_;
  size_t pos = 0;
  auto consumed = [&] { buffer.erase(0, pos); };
  while (true) {
    switch (phase_) {
      case Phase::kBody:
      case Phase::kChunkData: {
        const size_t take = std::min<uint64_t>(body_remaining_, buffer.size() - pos);
        r.body.append(buffer, pos, take);
        pos += take;
        body_remaining_ -= take;
        if (body_remaining_ > 0) {
          consumed();
          return State::kNeedMore;
        }
        phase_ = phase_ == Phase::kBody ? Phase::kDone : Phase::kChunkDataEnd;
        break;
      }
      case Phase::kChunkSize:
      case Phase::kChunkDataEnd:
      case Phase::kTrailers: {
        const size_t eol = buffer.find('\n', pos);
        if (eol == std::string::npos) {
          const size_t pending = buffer.size() - pos;
          if ((phase_ == Phase::kTrailers && pending > limits_.max_header_bytes) ||
              (phase_ != Phase::kTrailers && pending > kMaxChunkLine)) {
            return Fail(400, "malformed chunked body");
          }
          consumed();
          return State::kNeedMore;
        }
        std::string_view line = std::string_view(buffer).substr(pos, eol - pos);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        pos = eol + 1;
        if (phase_ == Phase::kChunkDataEnd) {
          if (!line.empty()) return Fail(400, "malformed chunked body: no CRLF after a chunk");
          phase_ = Phase::kChunkSize;
          break;
        }
        if (phase_ == Phase::kTrailers) {
          if (line.empty()) phase_ = Phase::kDone;  // trailer fields are ignored
          break;
        }
        line = line.substr(0, line.find(';'));  // chunk extensions are ignored
        line = Trim(line);
        if (line.empty() || line.size() > 15) return Fail(400, "malformed chunk size");
        uint64_t size = 0;
        for (char c : line) {
          const int v = HexValue(c);
          if (v < 0) return Fail(400, "malformed chunk size");
          size = size * 16 + static_cast<uint64_t>(v);
        }
        if (r.body.size() + size > limits_.max_body_bytes) {
          return Fail(413, "the request body is larger than the limit of " +
                               std::to_string(limits_.max_body_bytes) + " bytes");
        }
        body_remaining_ = size;
        phase_ = size == 0 ? Phase::kTrailers : Phase::kChunkData;
        break;
      }
      case Phase::kDone:
        consumed();
        return State::kComplete;
      case Phase::kHeaders:
        return State::kNeedMore;  // unreachable: Parse handles the head first
    }
  }
}

std::string_view ReasonPhrase(int code) {
  switch (code) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 202:
      return "Accepted";
    case 204:
      return "No Content";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 406:
      return "Not Acceptable";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 410:
      return "Gone";
    case 413:
      return "Request Entity Too Large";
    case 414:
      return "Request-URI Too Long";
    case 415:
      return "Unsupported Media Type";
    case 417:
      return "Expectation Failed";
    case 422:
      return "Unprocessable Entity";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Unknown";
  }
}

std::string ResponseHead(int code, const std::vector<std::pair<std::string, std::string>>& headers,
                         std::optional<size_t> content_length, bool keep_alive) {
  std::string out = "HTTP/1.1 " + std::to_string(code) + " ";
  out.append(ReasonPhrase(code));
  out += "\r\n";
  for (const auto& [k, v] : headers) {
    out += k;
    out += ": ";
    out += v;
    out += "\r\n";
  }
  if (content_length) {
    out += "Content-Length: " + std::to_string(*content_length) + "\r\n";
  } else {
    out += "Transfer-Encoding: chunked\r\n";
  }
  if (!keep_alive) out += "Connection: close\r\n";
  out += "\r\n";
  return out;
}

std::string Chunk(std::string_view data) {
  char size[24];
  const int n = std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  std::string out(size, static_cast<size_t>(n));
  out.append(data);
  out += "\r\n";
  return out;
}

}  // namespace muster::server
