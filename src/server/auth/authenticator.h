// Authenticator: who a request is, the way kube-apiserver decides it. In order:
// a verified client certificate (CN = user, O = groups), a bearer token from the
// static token file (--token-auth-file, kube-apiserver's CSV: token,user,uid,
// "group1,group2"), else anonymous (system:anonymous in system:unauthenticated)
// unless anonymous requests are refused. A bearer token that matches nothing is a
// 401, never anonymous. Every authenticated user is in system:authenticated.
//
// Without authentication configured (serve's default, loopback only), every request
// is the server's own user (identity.h): one person's machine.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "core/status.h"
#include "server/auth/identity.h"
#include "server/http_parser.h"

namespace muster::server::auth {

struct TokenEntry {
  UserInfo user;
  int line = 0;
};

// Parses a token file: one CSV record per line, at least token, user and uid;
// groups in an optional fourth column (quoted when it lists several). Errors name
// the file and line.
Result<std::map<std::string, TokenEntry>> ParseTokenFile(const std::string& text,
                                                         const std::string& path);

class Authenticator {
 public:
  // Everyone is the server's user.
  static Authenticator Unauthenticated();
  // Certificates (when TLS asks for them), `tokens`, anonymous when allowed.
  static Authenticator Secure(std::map<std::string, TokenEntry> tokens, bool anonymous);

  // nullopt: the credentials presented are wrong (401).
  std::optional<UserInfo> Authenticate(const HttpRequest& request, const PeerIdentity& peer) const;

  bool secure() const { return secure_; }

 private:
  bool secure_ = false;
  bool anonymous_ = true;
  std::map<std::string, TokenEntry> tokens_;
};

}  // namespace muster::server::auth
