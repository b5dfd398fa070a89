// TLS serving with the certificates muster makes for itself: the server proves
// its name, a client certificate names the user (CN) and groups (O), and one from
// another CA is refused in the handshake.
#include "server/auth/tls.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "http_test_client.h"
#include "server/auth/pki.h"
#include "server/http_server.h"

namespace muster::server {
namespace {

using auth::KeyPair;

struct Pki {
  KeyPair ca, server, alice, stranger;
};

Pki MakePki() {
  Pki p;
  p.ca = *auth::CreateCertificateAuthority("test-ca", 30);
  auth::CertificateSpec s;
  s.common_name = "muster";
  s.dns_names = {"localhost"};
  s.ip_addresses = {"127.0.0.1"};
  s.server = true;
  p.server = *auth::IssueCertificate(p.ca, s);
  auth::CertificateSpec c;
  c.common_name = "alice";
  c.organizations = {"team-a", "dev"};
  p.alice = *auth::IssueCertificate(p.ca, c);
  auto other_ca = *auth::CreateCertificateAuthority("other-ca", 30);
  c.common_name = "mallory";
  p.stranger = *auth::IssueCertificate(other_ca, c);
  return p;
}

// One HTTPS GET with OpenSSL: the body, or "" when the handshake failed.
std::string Get(int port, const Pki& pki, const KeyPair* client) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  BIO* bio = BIO_new_mem_buf(pki.ca.cert_pem.data(), static_cast<int>(pki.ca.cert_pem.size()));
  X509* ca = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), ca);
  X509_free(ca);
  BIO_free(bio);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  if (client != nullptr) {
    BIO* cb = BIO_new_mem_buf(client->cert_pem.data(), static_cast<int>(client->cert_pem.size()));
    X509* cert = PEM_read_bio_X509(cb, nullptr, nullptr, nullptr);
    BIO* kb = BIO_new_mem_buf(client->key_pem.data(), static_cast<int>(client->key_pem.size()));
    EVP_PKEY* key = PEM_read_bio_PrivateKey(kb, nullptr, nullptr, nullptr);
    SSL_CTX_use_certificate(ctx, cert);
    SSL_CTX_use_PrivateKey(ctx, key);
    X509_free(cert);
    EVP_PKEY_free(key);
    BIO_free(cb);
    BIO_free(kb);
  }
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string body;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
    SSL* ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    SSL_set1_host(ssl, "127.0.0.1");
    const std::string req = "GET /who HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    if (SSL_connect(ssl) == 1 && SSL_write(ssl, req.data(), static_cast<int>(req.size())) > 0) {
      char buf[4096];
      std::string all;
      int n;
      while ((n = SSL_read(ssl, buf, sizeof buf)) > 0) all.append(buf, static_cast<size_t>(n));
      if (auto end = all.find("\r\n\r\n"); end != std::string::npos) body = all.substr(end + 4);
    }
    SSL_free(ssl);
  }
  ::close(fd);
  SSL_CTX_free(ctx);
  ERR_clear_error();
  return body;
}

TEST(TlsTest, ClientCertificatesNameTheUserAndGroups) {
  const Pki pki = MakePki();
  const auto dir =
      std::filesystem::temp_directory_path() / ("muster-tls-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(auth::WriteFile((dir / "tls.crt").string(), pki.server.cert_pem, false).ok());
  ASSERT_TRUE(auth::WriteFile((dir / "tls.key").string(), pki.server.key_pem, true).ok());
  ASSERT_TRUE(auth::WriteFile((dir / "ca.crt").string(), pki.ca.cert_pem, false).ok());
  EXPECT_EQ(std::filesystem::status(dir / "tls.key").permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  auto tls = auth::TlsContext::Create((dir / "tls.crt").string(), (dir / "tls.key").string(),
                                      {(dir / "ca.crt").string()});
  ASSERT_TRUE(tls.ok()) << tls.status().ToString();
  HttpServerOptions options;
  options.tls = *tls;
  HttpServer server(
      [](const ApiRequest& r) -> ApiResult {
        std::string groups;
        for (const auto& g : r.user.groups) groups += (groups.empty() ? "" : ",") + g;
        return ApiResponse{200, "text/plain", r.user.name + " " + groups};
      },
      options);
  server.set_authenticate([](const HttpRequest&, const auth::PeerIdentity& peer) {
    auth::UserInfo u;
    u.name = peer.client_cert_verified ? peer.cert_common_name : "system:anonymous";
    u.groups = peer.cert_organizations;
    return std::optional<auth::UserInfo>(u);
  });
  ASSERT_TRUE(server.Bind("127.0.0.1", 0).ok());
  std::thread serving([&] { server.Serve(); });
  while (!server.running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));

  EXPECT_EQ(Get(server.port(), pki, &pki.alice), "alice team-a,dev");
  EXPECT_EQ(Get(server.port(), pki, nullptr), "system:anonymous ");
  EXPECT_EQ(Get(server.port(), pki, &pki.stranger), "");  // refused in the handshake
  // Plain HTTP on the TLS port is not understood, and does not wedge the server.
  {
    testing::RawClient plain(server.port(), 2000);
    ASSERT_TRUE(plain.Send("GET /who HTTP/1.1\r\nHost: x\r\n\r\n"));
    EXPECT_TRUE(plain.Closed());
  }
  EXPECT_EQ(Get(server.port(), pki, &pki.alice), "alice team-a,dev");

  server.Stop();
  serving.join();
  std::filesystem::remove_all(dir);
}

TEST(TlsTest, BadFilesAreClearErrors) {
  auto missing = auth::TlsContext::Create("/nonexistent/tls.crt", "/nonexistent/tls.key", {});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("--tls-cert-file /nonexistent/tls.crt"),
            std::string::npos);
}

TEST(TlsTest, ServingCertificateCoverage) {
  const Pki pki = MakePki();
  EXPECT_TRUE(auth::CertificateCovers(pki.server.cert_pem, "127.0.0.1", 7));
  EXPECT_TRUE(auth::CertificateCovers(pki.server.cert_pem, "localhost", 7));
  EXPECT_FALSE(auth::CertificateCovers(pki.server.cert_pem, "10.1.2.3", 7));
  EXPECT_FALSE(auth::CertificateCovers(pki.server.cert_pem, "localhost", 400));  // expires first
  EXPECT_EQ(auth::Base64("any carnal pleas"), "YW55IGNhcm5hbCBwbGVhcw==");
}

}  // namespace
}  // namespace muster::server
