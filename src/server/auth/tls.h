// TLS serving for the API (kube-apiserver's --tls-cert-file, --tls-private-key-file
// and --client-ca-file): an OpenSSL context and the non-blocking Transport of one
// connection. A client certificate is optional (a client may authenticate with a
// token instead), but one that is presented must chain to a client CA, or the
// handshake fails, as with Go's VerifyClientCertIfGiven. Its CN is the user and its
// O entries the groups (PeerIdentity).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "server/http_transport.h"

typedef struct ssl_ctx_st SSL_CTX;

namespace muster::server::auth {

class TlsContext {
 public:
  // `client_ca_files`: PEM bundles whose certificates may sign client certificates
  // (none: client certificates are not requested).
  static Result<std::shared_ptr<TlsContext>> Create(
      const std::string& cert_file, const std::string& key_file,
      const std::vector<std::string>& client_ca_files);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  std::unique_ptr<Transport> NewTransport(int fd) const;

 private:
  explicit TlsContext(SSL_CTX* ctx) : ctx_(ctx) {}
  SSL_CTX* ctx_;
};

}  // namespace muster::server::auth
