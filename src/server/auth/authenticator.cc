#include "server/auth/authenticator.h"

#include <openssl/crypto.h>

#include <algorithm>
#include <vector>

namespace muster::server::auth {
namespace {

// One CSV record (RFC 4180 quoting, as Go's encoding/csv reads the token file).
Result<std::vector<std::string>> ParseCsvLine(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"' && fields.back().empty()) {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c == '"') {
      return InvalidArgument("bare \" in a non-quoted field");
    } else {
      fields.back() += c;
    }
  }
  if (quoted) return InvalidArgument("a quoted field is not closed");
  return fields;
}

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

void AddGroup(UserInfo& u, const std::string& group) {
  if (!u.InGroup(group)) u.groups.push_back(group);
}

}  // namespace

Result<std::map<std::string, TokenEntry>> ParseTokenFile(const std::string& text,
                                                         const std::string& path) {
  std::map<std::string, TokenEntry> out;
  int line_no = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    const std::string line = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    if (Trim(line).empty()) continue;
    const std::string where = path + ":" + std::to_string(line_no) + ": ";
    auto fields = ParseCsvLine(line);
    if (!fields.ok()) return InvalidArgument(where + fields.status().message());
    if (fields->size() < 3) {
      return InvalidArgument(where + "expected token,user,uid[,\"group1,group2\"], got " +
                             std::to_string(fields->size()) + " field(s)");
    }
    TokenEntry e;
    e.line = line_no;
    const std::string token = (*fields)[0];
    e.user.name = (*fields)[1];
    e.user.uid = (*fields)[2];
    if (token.empty()) return InvalidArgument(where + "the token is empty");
    if (e.user.name.empty()) return InvalidArgument(where + "the user name is empty");
    if (fields->size() >= 4) {
      const std::string& groups = (*fields)[3];
      for (size_t g = 0; g <= groups.size();) {
        size_t comma = groups.find(',', g);
        if (comma == std::string::npos) comma = groups.size();
        const std::string group = Trim(groups.substr(g, comma - g));
        if (!group.empty()) AddGroup(e.user, group);
        g = comma + 1;
      }
    }
    if (out.count(token) != 0) {
      return InvalidArgument(where + "the token of line " + std::to_string(out[token].line) +
                             " again");
    }
    out.emplace(token, std::move(e));
  }
  return out;
}

Authenticator Authenticator::Unauthenticated() { return Authenticator(); }

Authenticator Authenticator::Secure(std::map<std::string, TokenEntry> tokens, bool anonymous) {
  Authenticator a;
  a.secure_ = true;
  a.anonymous_ = anonymous;
  a.tokens_ = std::move(tokens);
  return a;
}

std::optional<UserInfo> Authenticator::Authenticate(const HttpRequest& request,
                                                    const PeerIdentity& peer) const {
  if (!secure_) return ServerUser();
  if (peer.client_cert_verified) {
    UserInfo u;
    u.name = peer.cert_common_name;
    for (const auto& o : peer.cert_organizations) AddGroup(u, o);
    AddGroup(u, kAuthenticatedGroup);
    return u;
  }
  const std::string_view header = request.Header("authorization");
  if (!header.empty()) {
    const size_t space = header.find(' ');
    std::string scheme(header.substr(0, space));
    for (char& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (scheme == "bearer") {
      const std::string token =
          space == std::string_view::npos ? "" : Trim(std::string(header.substr(space + 1)));
      // Every entry is compared in constant time, so timing tells nothing of tokens.
      const TokenEntry* match = nullptr;
      for (const auto& [t, e] : tokens_) {
        if (t.size() == token.size() && CRYPTO_memcmp(t.data(), token.data(), t.size()) == 0) {
          match = &e;
        }
      }
      if (match == nullptr) return std::nullopt;
      UserInfo u = match->user;
      AddGroup(u, kAuthenticatedGroup);
      return u;
    }
    // Other schemes (Basic: removed from Kubernetes) authenticate no one.
    return std::nullopt;
  }
  if (!anonymous_) return std::nullopt;
  UserInfo anonymous;
  anonymous.name = kAnonymousUser;
  anonymous.groups = {kUnauthenticatedGroup};
  return anonymous;
}

}  // namespace muster::server::auth
