#include "server/auth/serve_auth.h"

#include <arpa/inet.h>

#include "server/auth/pki.h"

namespace muster::server::auth {

bool IsLoopbackHost(const std::string& host) {
  if (host == "localhost") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6) != 0;
  return false;  // "" (every address), 0.0.0.0, ::, a name or an interface address
}

Result<ServeAuth> SetUpAuthentication(const AuthOptions& given, const std::string& listen_host,
                                      const std::string& data_dir) {
  ServeAuth out;
  AuthOptions o = given;
  if (o.auto_tls) {
    if (!o.tls_cert_file.empty() || !o.tls_private_key_file.empty()) {
      return InvalidArgument(
          "--auto-tls makes its own serving certificate: give it or --tls-cert-file, not both");
    }
    if (data_dir.empty()) return InvalidArgument("--auto-tls needs the data directory");
    auto pki = EnsureServePki(data_dir, listen_host);
    if (!pki.ok()) return InvalidArgument("--auto-tls: " + pki.status().message());
    o.tls_cert_file = pki->server_cert_file;
    o.tls_private_key_file = pki->server_key_file;
    if (o.client_ca_file.empty()) o.client_ca_file = pki->ca_cert_file;
    out.pki = std::move(*pki);
  }
  if (o.tls_cert_file.empty() != o.tls_private_key_file.empty()) {
    return InvalidArgument("--tls-cert-file and --tls-private-key-file must be given together");
  }
  if (o.authorization_mode != "RBAC" && o.authorization_mode != "AlwaysAllow") {
    return InvalidArgument("--authorization-mode " + o.authorization_mode +
                           ": supported modes are RBAC and AlwaysAllow");
  }
  const bool tls = !o.tls_cert_file.empty();
  if (!o.client_ca_file.empty() && !tls) {
    return InvalidArgument(
        "--client-ca-file needs TLS: give --tls-cert-file and --tls-private-key-file too");
  }
  std::map<std::string, TokenEntry> tokens;
  if (!o.token_auth_file.empty()) {
    auto text = ReadFile(o.token_auth_file);
    if (!text.ok()) {
      return InvalidArgument("--token-auth-file: " + text.status().message());
    }
    auto parsed = ParseTokenFile(*text, o.token_auth_file);
    if (!parsed.ok()) return InvalidArgument("--token-auth-file " + parsed.status().message());
    tokens = std::move(*parsed);
  }
  const bool secure = !o.token_auth_file.empty() || !o.client_ca_file.empty();
  if (!IsLoopbackHost(listen_host) && !(tls && secure)) {
    return InvalidArgument(
        "--listen " + (listen_host.empty() ? std::string("(every address)") : listen_host) +
        " is not a loopback address: serving beyond this machine needs TLS "
        "(--auto-tls, or --tls-cert-file and --tls-private-key-file) and authentication "
        "(--auto-tls, --token-auth-file or --client-ca-file); without them muster serve "
        "listens on 127.0.0.1 only");
  }
  if (tls) {
    std::vector<std::string> cas;
    if (!o.client_ca_file.empty()) cas.push_back(o.client_ca_file);
    auto context = TlsContext::Create(o.tls_cert_file, o.tls_private_key_file, cas);
    if (!context.ok()) return context.status();
    out.tls = std::move(*context);
  }
  out.authenticator = secure ? Authenticator::Secure(std::move(tokens), /*anonymous=*/false)
                             : Authenticator::Unauthenticated();
  out.rbac = secure && o.authorization_mode == "RBAC";
  return out;
}

}  // namespace muster::server::auth
