// Authentication as kube-apiserver does it: the static token file's CSV, client
// certificates, a wrong token is 401 (never anonymous), serve's loopback rule; and
// end to end over HTTP, the authenticated user becomes the owner of what it creates.
#include "server/auth/authenticator.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "api_fixture.h"
#include "http_test_client.h"
#include "server/auth/owner.h"
#include "server/auth/pki.h"
#include "server/auth/serve_auth.h"
#include "server/http_server.h"

namespace muster::server {
namespace {

using auth::Authenticator;
using auth::ParseTokenFile;
using nlohmann::json;

HttpRequest WithAuthorization(const std::string& value) {
  HttpRequest r;
  r.method = "GET";
  r.path = "/api";
  if (!value.empty()) r.headers.emplace_back("authorization", value);
  return r;
}

TEST(TokenFile, ParsesKubeApiserversCsv) {
  auto tokens = ParseTokenFile(
      "t1,alice,1001,\"team-a,dev\"\n"
      "\n"
      "t2,bob,1002\n"
      "t3,carol,1003,ops\r\n",
      "tokens.csv");
  ASSERT_TRUE(tokens.ok()) << tokens.status().ToString();
  ASSERT_EQ(tokens->size(), 3u);
  EXPECT_EQ(tokens->at("t1").user.name, "alice");
  EXPECT_EQ(tokens->at("t1").user.uid, "1001");
  EXPECT_EQ(tokens->at("t1").user.groups, (std::vector<std::string>{"team-a", "dev"}));
  EXPECT_TRUE(tokens->at("t2").user.groups.empty());
  EXPECT_EQ(tokens->at("t3").user.groups, (std::vector<std::string>{"ops"}));
  EXPECT_EQ(tokens->at("t3").line, 4);
}

TEST(TokenFile, ErrorsNameTheFileAndLine) {
  const std::pair<const char*, const char*> cases[] = {
      {"t1,alice\n", "tokens.csv:1: expected token,user,uid"},
      {"t1,alice,1\nt1,bob,2\n", "tokens.csv:2: the token of line 1 again"},
      {"\n,alice,1\n", "tokens.csv:2: the token is empty"},
      {"t1,,1\n", "tokens.csv:1: the user name is empty"},
      {"t1,alice,1,\"dev\n", "tokens.csv:1: a quoted field is not closed"},
      {"t1,al\"ice,1\n", "tokens.csv:1: bare \""},
  };
  for (const auto& [text, want] : cases) {
    auto parsed = ParseTokenFile(text, "tokens.csv");
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_NE(parsed.status().message().find(want), std::string::npos)
        << text << " -> " << parsed.status().message();
  }
}

TEST(AuthenticatorTest, TokensCertificatesAndRefusals) {
  auto tokens = ParseTokenFile("secret-a,alice,1001,\"team-a\"\n", "t.csv");
  ASSERT_TRUE(tokens.ok());
  const Authenticator a = Authenticator::Secure(*tokens, /*anonymous=*/false);
  auth::PeerIdentity plain;
  auto alice = a.Authenticate(WithAuthorization("Bearer secret-a"), plain);
  ASSERT_TRUE(alice);
  EXPECT_EQ(alice->name, "alice");
  EXPECT_EQ(alice->uid, "1001");
  EXPECT_TRUE(alice->InGroup("team-a"));
  EXPECT_TRUE(alice->InGroup(auth::kAuthenticatedGroup));
  EXPECT_TRUE(a.Authenticate(WithAuthorization("bearer  secret-a "), plain));
  // A wrong token is 401, not anonymous; so is an unknown scheme, and nothing at all
  // when anonymous requests are off.
  for (const char* bad : {"Bearer garbage", "Bearer ", "Bearer secret-a2", "Bearer secret-",
                          "Basic YWxpY2U6eA==", ""}) {
    EXPECT_FALSE(a.Authenticate(WithAuthorization(bad), plain)) << bad;
  }
  // A verified client certificate: CN the user, O the groups; it wins over a token.
  auth::PeerIdentity cert;
  cert.client_cert_verified = true;
  cert.cert_common_name = "bob";
  cert.cert_organizations = {"system:masters", "ops"};
  auto bob = a.Authenticate(WithAuthorization("Bearer garbage"), cert);
  ASSERT_TRUE(bob);
  EXPECT_EQ(bob->name, "bob");
  EXPECT_EQ(bob->groups,
            (std::vector<std::string>{"system:masters", "ops", auth::kAuthenticatedGroup}));
  // Anonymous when allowed, as kube-apiserver's --anonymous-auth.
  const Authenticator open = Authenticator::Secure(*tokens, /*anonymous=*/true);
  auto anon = open.Authenticate(WithAuthorization(""), plain);
  ASSERT_TRUE(anon);
  EXPECT_EQ(anon->name, auth::kAnonymousUser);
  EXPECT_EQ(anon->groups, (std::vector<std::string>{auth::kUnauthenticatedGroup}));
  EXPECT_FALSE(open.Authenticate(WithAuthorization("Bearer garbage"), plain));
  // Unauthenticated serve: everyone is the server's user, whatever is sent.
  auto server = Authenticator::Unauthenticated().Authenticate(WithAuthorization("Bearer x"), plain);
  ASSERT_TRUE(server);
  EXPECT_EQ(server->name, auth::ServerUser().name);
}

class ServeAuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("muster-serve-auth-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const auto path = (dir_ / name).string();
    EXPECT_TRUE(auth::WriteFile(path, text, true).ok());
    return path;
  }
  std::filesystem::path dir_;
};

TEST_F(ServeAuthTest, LoopbackOnlyWithoutTlsAndAuthentication) {
  EXPECT_TRUE(auth::IsLoopbackHost("127.0.0.1"));
  EXPECT_TRUE(auth::IsLoopbackHost("127.1.2.3"));
  EXPECT_TRUE(auth::IsLoopbackHost("::1"));
  EXPECT_TRUE(auth::IsLoopbackHost("localhost"));
  for (const char* host : {"0.0.0.0", "", "::", "10.0.0.7", "example.com"}) {
    EXPECT_FALSE(auth::IsLoopbackHost(host)) << host;
    auto refused = auth::SetUpAuthentication({}, host);
    ASSERT_FALSE(refused.ok()) << host;
    EXPECT_NE(refused.status().message().find("is not a loopback address"), std::string::npos)
        << refused.status().message();
  }
  auto local = auth::SetUpAuthentication({}, "127.0.0.1");
  ASSERT_TRUE(local.ok());
  EXPECT_FALSE(local->authenticator.secure());
  EXPECT_EQ(local->tls, nullptr);
  // Tokens alone do not open a non-loopback address: they would travel in clear.
  auth::AuthOptions tokens_only;
  tokens_only.token_auth_file = Write("tokens.csv", "t,alice,1\n");
  EXPECT_FALSE(auth::SetUpAuthentication(tokens_only, "0.0.0.0").ok());
  auto secured = auth::SetUpAuthentication(tokens_only, "127.0.0.1");
  ASSERT_TRUE(secured.ok());
  EXPECT_TRUE(secured->authenticator.secure());
}

TEST_F(ServeAuthTest, BadFlagsAreClearErrors) {
  auth::AuthOptions half;
  half.tls_cert_file = "x.crt";
  auto r = auth::SetUpAuthentication(half, "127.0.0.1");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("must be given together"), std::string::npos);
  auth::AuthOptions ca_only;
  ca_only.client_ca_file = "ca.crt";
  r = auth::SetUpAuthentication(ca_only, "127.0.0.1");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--client-ca-file needs TLS"), std::string::npos);
  auth::AuthOptions bad_tokens;
  bad_tokens.token_auth_file = Write("bad.csv", "t,alice,1\nt,bob,2\n");
  r = auth::SetUpAuthentication(bad_tokens, "127.0.0.1");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--token-auth-file " + bad_tokens.token_auth_file +
                                      ":2: the token of line 1 again"),
            std::string::npos)
      << r.status().message();
  auth::AuthOptions missing;
  missing.token_auth_file = (dir_ / "absent.csv").string();
  r = auth::SetUpAuthentication(missing, "127.0.0.1");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("absent.csv"), std::string::npos);
}

TEST_F(ServeAuthTest, AutoTlsMakesAndKeepsItsOwnCertificatesAndAnAdminKubeconfig) {
  auth::AuthOptions options;
  options.auto_tls = true;
  const std::string data = (dir_ / "data").string();
  // TLS and client certificates: enough to serve beyond loopback.
  auto first = auth::SetUpAuthentication(options, "0.0.0.0", data);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE(first->pki.has_value());
  EXPECT_NE(first->tls, nullptr);
  EXPECT_TRUE(first->authenticator.secure());
  const auth::ServePki& pki = *first->pki;
  namespace fs = std::filesystem;
  for (const char* key : {"ca.key", "serving.key", "admin.key"}) {
    EXPECT_EQ(fs::status(fs::path(pki.dir) / key).permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write)
        << key;
  }
  auto serving = auth::ReadFile(pki.server_cert_file);
  ASSERT_TRUE(serving.ok());
  EXPECT_TRUE(auth::CertificateCovers(*serving, "127.0.0.1", 300));
  EXPECT_TRUE(auth::CertificateCovers(*serving, "localhost", 300));
  EXPECT_FALSE(auth::CertificateCovers(*serving, "example.com", 1));

  // A restart keeps the CA, the serving certificate and the admin's: kubeconfigs
  // handed out stay valid.
  auto second = auth::SetUpAuthentication(options, "127.0.0.1", data);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->pki->ca.cert_pem, pki.ca.cert_pem);
  EXPECT_EQ(second->pki->admin.cert_pem, pki.admin.cert_pem);
  EXPECT_EQ(*auth::ReadFile(pki.server_cert_file), *serving);
  // A listen name the certificate lacks gets a new serving certificate, same CA.
  auto named = auth::SetUpAuthentication(options, "muster.example.com", data);
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(named->pki->ca.cert_pem, pki.ca.cert_pem);
  EXPECT_TRUE(
      auth::CertificateCovers(*auth::ReadFile(pki.server_cert_file), "muster.example.com", 300));

  auto kubeconfig = auth::WriteAdminKubeconfig(data, pki, "https://127.0.0.1:6443");
  ASSERT_TRUE(kubeconfig.ok());
  auto text = auth::ReadFile(*kubeconfig);
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text->find("server: https://127.0.0.1:6443\n"), std::string::npos);
  EXPECT_NE(text->find("certificate-authority-data: " + auth::Base64(pki.ca.cert_pem)),
            std::string::npos);
  EXPECT_NE(text->find("client-key-data: " + auth::Base64(pki.admin.key_pem)), std::string::npos);
  EXPECT_EQ(fs::status(*kubeconfig).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);

  options.tls_cert_file = "x.crt";
  options.tls_private_key_file = "x.key";
  auto both = auth::SetUpAuthentication(options, "127.0.0.1", data);
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.status().message().find("not both"), std::string::npos);
}

class AuthenticatedApiTest : public testing::ApiFixture {};

TEST_F(AuthenticatedApiTest, TheTokensUserOwnsWhatItCreatesAndAWrongTokenIs401) {
  auto tokens = ParseTokenFile("tok-alice,alice,1001\n", "t.csv");
  ASSERT_TRUE(tokens.ok());
  const Authenticator authenticator = Authenticator::Secure(*tokens, false);
  HttpServer server(*handler_);
  server.set_authenticate([&](const HttpRequest& r, const auth::PeerIdentity& p) {
    return authenticator.Authenticate(r, p);
  });
  ASSERT_TRUE(server.Bind("127.0.0.1", 0).ok());
  std::thread serving([&] { server.Serve(); });
  while (!server.running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));

  const std::string body = R"({"metadata":{"name":"team-a"}})";
  auto post = [&](const std::string& auth_header) {
    testing::RawClient c(server.port());
    EXPECT_TRUE(c.Send("POST /api/v1/namespaces HTTP/1.1\r\nContent-Type: application/json\r\n" +
                       auth_header + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" +
                       body));
    auto r = c.Read();
    return r ? *r : testing::RawResponse{};
  };
  for (const char* bad : {"Authorization: Bearer nope\r\n", ""}) {
    auto refused = post(bad);
    EXPECT_EQ(refused.code, 401) << bad;
    json status = json::parse(refused.body, nullptr, false);
    EXPECT_EQ(status["kind"], "Status");
    EXPECT_EQ(status["reason"], "Unauthorized");
  }
  EXPECT_FALSE(store_->Get({"namespaces", "", "team-a"}).ok());
  {
    // Health checks answer without credentials (a load balancer's probe has none).
    testing::RawClient probe(server.port());
    ASSERT_TRUE(probe.Send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
    auto health = probe.Read();
    ASSERT_TRUE(health);
    EXPECT_EQ(health->code, 200) << health->body;
  }
  auto created = post("Authorization: Bearer tok-alice\r\n");
  EXPECT_EQ(created.code, 201) << created.body;
  auto stored = store_->Get({"namespaces", "", "team-a"});
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ((*stored)["metadata"]["annotations"][auth::kOwnerAnnotation], "alice");

  server.Stop();
  serving.join();
}

}  // namespace
}  // namespace muster::server
