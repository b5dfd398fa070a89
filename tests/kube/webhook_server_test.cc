// The webhook over real TLS: a self-signed certificate made with the openssl binary,
// httplib's SSLClient verifying it, as the API server would with the caBundle.
#include "kube/webhook_server.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

// As in src/kube/webhook_server.cc: the options Debian's libcpp-httplib was built with.
#define CPPHTTPLIB_OPENSSL_SUPPORT
#define CPPHTTPLIB_ZLIB_SUPPORT
#define CPPHTTPLIB_BROTLI_SUPPORT
#include <httplib.h>

namespace muster::kube {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

class WebhookServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("command -v openssl >/dev/null 2>&1") != 0) {
      GTEST_SKIP() << "no openssl binary to make a test certificate";
    }
    std::string dir_template = (fs::temp_directory_path() / "muster-webhook-XXXXXX").string();
    ASSERT_NE(mkdtemp(dir_template.data()), nullptr);
    dir_ = dir_template;
    // EC keys are made in milliseconds; RSA would slow every run.
    const std::string command =
        "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1"
        " -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1"
        " -keyout '" +
        dir_ + "/tls.key' -out '" + dir_ + "/tls.crt' >/dev/null 2>&1";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
  }

  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  WebhookServerOptions Options() const {
    WebhookServerOptions options;
    options.host = "127.0.0.1";
    options.port = 0;
    options.cert_dir = dir_;
    return options;
  }

  // A client that trusts only the test certificate and checks the host name.
  std::unique_ptr<httplib::SSLClient> Client(int port) const {
    auto client = std::make_unique<httplib::SSLClient>("127.0.0.1", port);
    client->set_ca_cert_path((dir_ + "/tls.crt").c_str());
    client->enable_server_certificate_verification(true);
    client->set_connection_timeout(5);
    client->set_read_timeout(5);
    return client;
  }

  std::string dir_;
};

json QueuedJobReview() {
  return json::parse(R"({
    "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
    "request": {
      "uid": "b0d4e4b8-1c1f-4a58-9c0e-2a4d8f7f1a01",
      "kind": {"group": "batch", "version": "v1", "kind": "Job"},
      "resource": {"group": "batch", "version": "v1", "resource": "jobs"},
      "operation": "CREATE", "namespace": "team-a",
      "object": {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "train", "namespace": "team-a",
                     "labels": {"kueue.x-k8s.io/queue-name": "team-a"}},
        "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}}
      }
    }
  })");
}

TEST_F(WebhookServerTest, AnswersAdmissionReviewOverTls) {
  WebhookServer server(Options());
  ASSERT_TRUE(server.Start().ok());
  ASSERT_GT(server.port(), 0);
  auto client = Client(server.port());

  auto res = client->Post("/mutate-jobs", QueuedJobReview().dump(), "application/json");
  ASSERT_TRUE(res) << httplib::to_string(res.error())
                   << " verify=" << client->get_openssl_verify_result();
  EXPECT_EQ(res->status, 200);
  EXPECT_NE(res->get_header_value("Content-Type").find("application/json"), std::string::npos);
  const json review = json::parse(res->body);
  EXPECT_EQ(review["kind"], "AdmissionReview");
  EXPECT_EQ(review["response"]["uid"], "b0d4e4b8-1c1f-4a58-9c0e-2a4d8f7f1a01");
  EXPECT_EQ(review["response"]["allowed"], true);
  EXPECT_EQ(review["response"]["patchType"], "JSONPatch");
  // base64 of [{"op":"add","path":"/spec/suspend","value":true}]
  EXPECT_EQ(review["response"]["patch"],
            "W3sib3AiOiJhZGQiLCJwYXRoIjoiL3NwZWMvc3VzcGVuZCIsInZhbHVlIjp0cnVlfV0=");

  auto bad = client->Post("/mutate-jobs", "{", "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(json::parse(bad->body)["response"]["allowed"], false);

  auto health = client->Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(health->body, "ok");

  EXPECT_EQ(client->Get("/mutate-jobs")->status, 404);
  server.Stop();
  server.Stop();  // idempotent
  EXPECT_FALSE(Client(server.port())->Get("/healthz"));
}

TEST_F(WebhookServerTest, RejectsClientThatDoesNotTrustTheCertificate) {
  WebhookServer server(Options());
  ASSERT_TRUE(server.Start().ok());
  // Trusting only the system CAs, as a client without the caBundle would.
  httplib::SSLClient client("127.0.0.1", server.port());
  client.enable_server_certificate_verification(true);
  client.set_connection_timeout(5);
  EXPECT_FALSE(client.Get("/healthz"));
  // Plain HTTP gets no answer from a TLS listener.
  httplib::Client plain("127.0.0.1", server.port());
  plain.set_read_timeout(5);
  auto res = plain.Get("/healthz");
  EXPECT_TRUE(!res || res->status != 200);
}

TEST_F(WebhookServerTest, MissingOrInvalidCertificateIsAnError) {
  WebhookServerOptions options = Options();
  options.cert_dir = dir_ + "/absent";
  Status s = WebhookServer(options).Start();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find(dir_ + "/absent/tls.crt"), std::string::npos) << s.message();

  std::ofstream(dir_ + "/tls.key") << "not a key\n";
  s = WebhookServer(Options()).Start();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("not a PEM certificate and its private key"), std::string::npos)
      << s.message();
}

TEST_F(WebhookServerTest, SecondStartIsRefused) {
  WebhookServer server(Options());
  ASSERT_TRUE(server.Start().ok());
  EXPECT_EQ(server.Start().code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace muster::kube
