#include "server/auth/tls.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cerrno>

namespace muster::server::auth {
namespace {

std::string OpenSslError() {
  const unsigned long e = ERR_get_error();
  if (e == 0) return "unknown error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  ERR_clear_error();
  return buf;
}

// The UTF-8 text of each `nid` entry of a certificate name (CN, O).
std::vector<std::string> NameEntries(X509_NAME* name, int nid) {
  std::vector<std::string> out;
  for (int i = X509_NAME_get_index_by_NID(name, nid, -1); i >= 0;
       i = X509_NAME_get_index_by_NID(name, nid, i)) {
    ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, i));
    unsigned char* utf8 = nullptr;
    const int len = ASN1_STRING_to_UTF8(&utf8, data);
    if (len >= 0) out.emplace_back(reinterpret_cast<char*>(utf8), static_cast<size_t>(len));
    OPENSSL_free(utf8);
  }
  return out;
}

class TlsTransport : public Transport {
 public:
  TlsTransport(SSL_CTX* ctx, int fd) : ssl_(SSL_new(ctx)) {
    SSL_set_fd(ssl_, fd);
    SSL_set_accept_state(ssl_);
  }
  ~TlsTransport() override { SSL_free(ssl_); }

  IoResult Handshake() override {
    ERR_clear_error();
    const int r = SSL_do_handshake(ssl_);
    return r == 1 ? IoResult::kOk : Classify(r);
  }
  IoResult Read(char* buf, size_t cap, size_t& n) override {
    ERR_clear_error();
    const int r = SSL_read_ex(ssl_, buf, cap, &n);
    return r == 1 ? IoResult::kOk : Classify(r);
  }
  IoResult Write(const char* buf, size_t len, size_t& n) override {
    ERR_clear_error();
    const int r = SSL_write_ex(ssl_, buf, len, &n);
    return r == 1 ? IoResult::kOk : Classify(r);
  }
  bool HasBuffered() const override { return SSL_pending(ssl_) > 0; }
  void Identify(PeerIdentity& peer) const override {
    X509* cert = SSL_get1_peer_certificate(ssl_);
    if (cert == nullptr) return;
    if (SSL_get_verify_result(ssl_) == X509_V_OK) {
      X509_NAME* subject = X509_get_subject_name(cert);
      auto cn = NameEntries(subject, NID_commonName);
      if (!cn.empty() && !cn.front().empty()) {
        peer.client_cert_verified = true;
        peer.cert_common_name = cn.front();
        peer.cert_organizations = NameEntries(subject, NID_organizationName);
      }
    }
    X509_free(cert);
  }

 private:
  IoResult Classify(int r) const {
    switch (SSL_get_error(ssl_, r)) {
      case SSL_ERROR_WANT_READ:
        return IoResult::kWantRead;
      case SSL_ERROR_WANT_WRITE:
        return IoResult::kWantWrite;
      case SSL_ERROR_ZERO_RETURN:
        return IoResult::kClosed;
      case SSL_ERROR_SYSCALL:
        return errno == 0 ? IoResult::kClosed : IoResult::kError;
      default:
        return IoResult::kError;
    }
  }
  SSL* ssl_;
};

}  // namespace

Result<std::shared_ptr<TlsContext>> TlsContext::Create(
    const std::string& cert_file, const std::string& key_file,
    const std::vector<std::string>& client_ca_files) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr) return Internal("TLS: " + OpenSslError());
  std::shared_ptr<TlsContext> out(new TlsContext(ctx));
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  // The reactor retries a write from a buffer that may have grown (moved) since.
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (SSL_CTX_use_certificate_chain_file(ctx, cert_file.c_str()) != 1) {
    return InvalidArgument("--tls-cert-file " + cert_file + ": " + OpenSslError());
  }
  if (SSL_CTX_use_PrivateKey_file(ctx, key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    return InvalidArgument("--tls-private-key-file " + key_file + ": " + OpenSslError());
  }
  if (SSL_CTX_check_private_key(ctx) != 1) {
    return InvalidArgument("--tls-private-key-file " + key_file + " is not the key of " +
                           cert_file);
  }
  if (!client_ca_files.empty()) {
    STACK_OF(X509_NAME)* names = sk_X509_NAME_new_null();
    for (const auto& ca : client_ca_files) {
      if (SSL_CTX_load_verify_locations(ctx, ca.c_str(), nullptr) != 1) {
        sk_X509_NAME_pop_free(names, X509_NAME_free);
        return InvalidArgument("--client-ca-file " + ca + ": " + OpenSslError());
      }
      SSL_add_file_cert_subjects_to_stack(names, ca.c_str());
    }
    SSL_CTX_set_client_CA_list(ctx, names);
    // Asked for, not required: token clients have none.
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  }
  return out;
}

TlsContext::~TlsContext() { SSL_CTX_free(ctx_); }

std::unique_ptr<Transport> TlsContext::NewTransport(int fd) const {
  return std::make_unique<TlsTransport>(ctx_, fd);
}

}  // namespace muster::server::auth
