// KubeClient over HTTPS against httplib::SSLServer, with certificates made by the
// `openssl` command for this test run (skipped where it is not installed).
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "kube/kube_client.h"

// Debian's compiled cpp-httplib: every TU must see the options it was built with.
#define CPPHTTPLIB_OPENSSL_SUPPORT
#define CPPHTTPLIB_ZLIB_SUPPORT
#define CPPHTTPLIB_BROTLI_SUPPORT
#include <gtest/gtest.h>
#include <httplib.h>

namespace muster::kube {
namespace {

namespace fs = std::filesystem;

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A CA, a server certificate for IP 127.0.0.1 and a client certificate from it, plus an
// unrelated CA. EC keys: generating them is fast.
class TlsFiles {
 public:
  static TlsFiles* Make() {
    if (std::system("command -v openssl >/dev/null 2>&1") != 0) return nullptr;
    auto* files = new TlsFiles();
    if (!files->Generate()) {
      delete files;
      return nullptr;
    }
    return files;
  }
  ~TlsFiles() { fs::remove_all(dir); }
  std::string Path(const std::string& name) const { return (dir / name).string(); }

  fs::path dir;

 private:
  bool Generate() {
    dir = fs::temp_directory_path() / ("muster-kube-tls-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::ofstream(dir / "server.ext") << "subjectAltName=IP:127.0.0.1\n"
                                         "extendedKeyUsage=serverAuth\n";
    std::ofstream(dir / "client.ext") << "extendedKeyUsage=clientAuth\n";
    const std::string key = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    const std::string script =
        "cd '" + dir.string() + "' && " + "openssl req -x509 " + key +
        " -keyout ca.key -out ca.crt -days 2 -subj /CN=test-ca && " + "openssl req -x509 " + key +
        " -keyout other-ca.key -out other-ca.crt -days 2 " + "-subj /CN=other-ca && " +
        "openssl req " + key + " -keyout server.key -out server.csr -subj /CN=127.0.0.1 && " +
        "openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial " +
        "-out server.crt -days 2 -extfile server.ext && " + "openssl req " + key +
        " -keyout client.key -out client.csr -subj /CN=muster && " +
        "openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial " +
        "-out client.crt -days 2 -extfile client.ext";
    return std::system(("(" + script + ") >/dev/null 2>&1").c_str()) == 0;
  }
};

class KubeClientTlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { files_ = TlsFiles::Make(); }
  static void TearDownTestSuite() {
    delete files_;
    files_ = nullptr;
  }
  void SetUp() override {
    if (files_ == nullptr) GTEST_SKIP() << "openssl is not installed (or failed)";
  }

  // Serves GET /ok over TLS; with `client_ca`, demands a client certificate from it.
  void StartServer(bool require_client_cert) {
    const std::string client_ca = files_->Path("ca.crt");
    server_ = std::make_unique<httplib::SSLServer>(
        files_->Path("server.crt").c_str(), files_->Path("server.key").c_str(),
        require_client_cert ? client_ca.c_str() : nullptr);
    ASSERT_TRUE(server_->is_valid());
    server_->Get("/ok", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("secure", "text/plain");
    });
    port_ = server_->bind_to_any_port("127.0.0.1");
    ASSERT_GT(port_, 0);
    thread_ = std::thread([this] { server_->listen_after_bind(); });
  }
  void TearDown() override {
    if (server_) server_->stop();
    if (thread_.joinable()) thread_.join();
  }

  ClusterConnection Connection() const {
    ClusterConnection c;
    c.server = "https://127.0.0.1:" + std::to_string(port_);
    return c;
  }
  HttpResponse Get(const ClusterConnection& c) { return KubeClient(c).Get("/ok"); }

  static TlsFiles* files_;
  std::unique_ptr<httplib::SSLServer> server_;
  int port_ = 0;
  std::thread thread_;
};

TlsFiles* KubeClientTlsTest::files_ = nullptr;

TEST_F(KubeClientTlsTest, CaAsDataOrFileVerifiesTheServer) {
  StartServer(/*require_client_cert=*/false);
  ClusterConnection by_data = Connection();
  by_data.ca_pem = ReadAll(files_->Path("ca.crt"));
  HttpResponse resp = Get(by_data);
  EXPECT_EQ(resp.code, 200) << resp.error;
  EXPECT_EQ(resp.body, "secure");

  ClusterConnection by_file = Connection();
  by_file.ca_file = files_->Path("ca.crt");
  resp = Get(by_file);
  EXPECT_EQ(resp.code, 200) << resp.error;
}

TEST_F(KubeClientTlsTest, WrongCaFailsAndInsecureSkipsVerification) {
  StartServer(/*require_client_cert=*/false);
  ClusterConnection wrong = Connection();
  wrong.ca_pem = ReadAll(files_->Path("other-ca.crt"));
  HttpResponse resp = Get(wrong);
  EXPECT_EQ(resp.code, 0);
  EXPECT_FALSE(resp.error.empty());

  wrong.ca_pem.clear();
  wrong.ca_file = files_->Path("other-ca.crt");
  EXPECT_EQ(Get(wrong).code, 0);

  ClusterConnection insecure = Connection();
  insecure.ca_pem = ReadAll(files_->Path("other-ca.crt"));
  insecure.insecure_skip_tls_verify = true;
  resp = Get(insecure);
  EXPECT_EQ(resp.code, 200) << resp.error;
}

TEST_F(KubeClientTlsTest, ClientCertificateIsPresentedAsDataOrFiles) {
  StartServer(/*require_client_cert=*/true);
  ClusterConnection none = Connection();
  none.ca_file = files_->Path("ca.crt");
  EXPECT_EQ(Get(none).code, 0);  // the server demands a certificate

  ClusterConnection by_data = none;
  by_data.client_cert_pem = ReadAll(files_->Path("client.crt"));
  by_data.client_key_pem = ReadAll(files_->Path("client.key"));
  HttpResponse resp = Get(by_data);
  EXPECT_EQ(resp.code, 200) << resp.error;

  ClusterConnection by_file = none;
  by_file.client_cert_file = files_->Path("client.crt");
  by_file.client_key_file = files_->Path("client.key");
  resp = Get(by_file);
  EXPECT_EQ(resp.code, 200) << resp.error;

  // A certificate from another CA is refused.
  ClusterConnection foreign = none;
  foreign.client_cert_pem = ReadAll(files_->Path("other-ca.crt"));
  foreign.client_key_pem = ReadAll(files_->Path("other-ca.key"));
  EXPECT_EQ(Get(foreign).code, 0);
}

}  // namespace
}  // namespace muster::kube
