#include "kube/cluster_connection.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

namespace muster::kube {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// Sets environment variables for one test and restores them afterwards.
class EnvGuard {
 public:
  void Set(const std::string& name, const std::optional<std::string>& value) {
    if (!saved_.count(name)) {
      const char* old = std::getenv(name.c_str());
      saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
    }
    if (value) {
      setenv(name.c_str(), value->c_str(), 1);
    } else {
      unsetenv(name.c_str());
    }
  }
  ~EnvGuard() {
    for (const auto& [name, value] : saved_) {
      if (value) {
        setenv(name.c_str(), value->c_str(), 1);
      } else {
        unsetenv(name.c_str());
      }
    }
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

class ClusterConnectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("muster-kubeconfig-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    // Nothing from the machine running the tests may leak in.
    env_.Set("KUBECONFIG", std::nullopt);
    env_.Set("KUBERNETES_SERVICE_HOST", std::nullopt);
    env_.Set("KUBERNETES_SERVICE_PORT", std::nullopt);
    env_.Set("HOME", dir_.string() + "/home");
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }

  fs::path dir_;
  EnvGuard env_;
};

// "ca-pem" and "cert-pem" / "key-pem" in base64.
constexpr const char* kKubeconfig = R"(apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev-cluster
  cluster:
    server: https://dev.example:6443
    certificate-authority-data: Y2EtcGVt
- name: prod-cluster
  cluster:
    server: https://prod.example:443
    certificate-authority: certs/ca.crt
- name: lab-cluster
  cluster:
    server: https://lab.example
    insecure-skip-tls-verify: true
contexts:
- name: dev
  context: {cluster: dev-cluster, user: dev-user, namespace: team-a}
- name: prod
  context: {cluster: prod-cluster, user: prod-user}
- name: lab
  context: {cluster: lab-cluster, user: lab-user}
- name: broken-cluster
  context: {cluster: nope, user: dev-user}
- name: broken-user
  context: {cluster: dev-cluster, user: nobody}
users:
- name: dev-user
  user:
    token: dev-token
    client-certificate-data: Y2VydC1wZW0=
    client-key-data: a2V5LXBlbQ==
- name: prod-user
  user:
    client-certificate: certs/client.crt
    client-key: /abs/never/read.key
- name: lab-user
  user:
    tokenFile: lab-token
)";

TEST_F(ClusterConnectionTest, CurrentContextWithTokenAndDataFields) {
  const std::string path = Write("config", kKubeconfig);
  auto conn = LoadKubeconfig(path, "");
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();
  EXPECT_EQ(conn->server, "https://dev.example:6443");
  EXPECT_EQ(conn->ca_pem, "ca-pem");
  EXPECT_EQ(conn->ca_file, "");
  EXPECT_EQ(conn->client_cert_pem, "cert-pem");
  EXPECT_EQ(conn->client_key_pem, "key-pem");
  EXPECT_EQ(conn->token, "dev-token");
  EXPECT_EQ(conn->namespace_, "team-a");
  EXPECT_FALSE(conn->insecure_skip_tls_verify);
  EXPECT_EQ(conn->source, "kubeconfig " + path + " (context dev)");
}

TEST_F(ClusterConnectionTest, RelativeFilesResolveAgainstTheKubeconfigDirectory) {
  const std::string path = Write("kube/config", kKubeconfig);
  Write("kube/certs/ca.crt", "ca");
  Write("kube/certs/client.crt", "cert");
  // The key's absolute path does not exist: the error names it and the user.
  auto conn = LoadKubeconfig(path, "prod");
  ASSERT_FALSE(conn.ok());
  EXPECT_EQ(conn.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(conn.status().message(), "kubeconfig " + path +
                                         ": context \"prod\": user \"prod-user\": client-key "
                                         "/abs/never/read.key: no such file");
  Write("kube/abs-key.pem", "key");
  std::string text = kKubeconfig;
  text.replace(text.find("/abs/never/read.key"), 19, "abs-key.pem");
  Write("kube/config", text);
  conn = LoadKubeconfig(path, "prod");
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();
  EXPECT_EQ(conn->ca_file, (dir_ / "kube/certs/ca.crt").string());
  EXPECT_EQ(conn->client_cert_file, (dir_ / "kube/certs/client.crt").string());
  EXPECT_EQ(conn->client_key_file, (dir_ / "kube/abs-key.pem").string());
  EXPECT_EQ(conn->namespace_, "default");
  EXPECT_EQ(conn->token, "");
}

TEST_F(ClusterConnectionTest, TokenFileAndInsecure) {
  const std::string path = Write("config", kKubeconfig);
  Write("lab-token", "lab-secret\n");
  auto conn = LoadKubeconfig(path, "lab");
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();
  EXPECT_TRUE(conn->insecure_skip_tls_verify);
  EXPECT_EQ(conn->token, "lab-secret");
  EXPECT_EQ(conn->token_file, (dir_ / "lab-token").string());
  EXPECT_EQ(conn->server, "https://lab.example");
}

TEST_F(ClusterConnectionTest, ErrorsNameTheFileContextAndMissingPiece) {
  const std::string path = Write("config", kKubeconfig);
  const std::string where = "kubeconfig " + path + ": ";
  auto missing_context = LoadKubeconfig(path, "staging");
  EXPECT_EQ(missing_context.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing_context.status().message(), where + "context \"staging\" not found");
  EXPECT_EQ(LoadKubeconfig(path, "broken-cluster").status().message(),
            where + "context \"broken-cluster\": cluster \"nope\" not found");
  EXPECT_EQ(LoadKubeconfig(path, "broken-user").status().message(),
            where + "context \"broken-user\": user \"nobody\" not found");
  // tokenFile that does not exist.
  EXPECT_EQ(LoadKubeconfig(path, "lab").status().message(),
            where + "context \"lab\": user \"lab-user\": tokenFile " +
                (dir_ / "lab-token").string() + ": cannot read");
  EXPECT_EQ(LoadKubeconfig((dir_ / "absent").string(), "").status().message(),
            "kubeconfig " + (dir_ / "absent").string() + ": cannot read file");
}

TEST_F(ClusterConnectionTest, MalformedKubeconfigs) {
  struct Case {
    std::string text;
    std::string error;  // after "kubeconfig <path>: "
  };
  const std::vector<Case> cases = {
      {"contexts: []\n", "no current-context (and no --context given)"},
      {"- just a list\n", "not a YAML mapping"},
      {"current-context: c\ncontexts:\n- name: c\n  context: {user: u}\n",
       "context \"c\": no cluster"},
      {"current-context: c\ncontexts:\n- name: c\n  context: {cluster: k}\n"
       "clusters:\n- name: k\n  cluster: {}\n",
       "context \"c\": cluster \"k\": server is empty"},
      {"current-context: c\ncontexts:\n- name: c\n  context: {cluster: k}\n"
       "clusters:\n- name: k\n  cluster: {server: dev.example}\n",
       "context \"c\": cluster \"k\": server \"dev.example\" is not an http(s):// URL"},
      {"current-context: c\ncontexts:\n- name: c\n  context: {cluster: k}\n"
       "clusters:\n- name: k\n  cluster: {server: 'https://x', certificate-authority-data: "
       "'ab$d'}\n",
       "context \"c\": cluster \"k\": certificate-authority-data: invalid base64 character '$'"},
      {"current-context: c\ncontexts:\n- name: c\n  context: {cluster: k}\n"
       "clusters:\n- name: k\n  cluster: {server: 'https://x', insecure-skip-tls-verify: "
       "maybe}\n",
       "context \"c\": cluster \"k\": insecure-skip-tls-verify is not a boolean"},
      {"current-context: c\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\n"
       "clusters:\n- name: k\n  cluster: {server: 'https://x'}\n"
       "users:\n- name: u\n  user: {client-certificate-data: Y2VydA==}\n",
       "context \"c\": user \"u\": client-certificate and client-key must be given together"},
      {"current-context: c\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\n"
       "clusters:\n- name: k\n  cluster: {server: 'https://x'}\n"
       "users:\n- name: u\n  user: {exec: {command: aws}}\n",
       "context \"c\": user \"u\": exec and auth-provider credential plugins are not "
       "supported; use a token, tokenFile or client certificate"},
  };
  for (const auto& c : cases) {
    const std::string path = Write("config", c.text);
    auto conn = LoadKubeconfig(path, "");
    ASSERT_FALSE(conn.ok()) << c.text;
    EXPECT_EQ(conn.status().message(), "kubeconfig " + path + ": " + c.error) << c.text;
  }
  const std::string path = Write("config", "clusters: [unclosed\n");
  auto bad_yaml = LoadKubeconfig(path, "");
  EXPECT_EQ(bad_yaml.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(bad_yaml.status().message(), HasSubstr("kubeconfig " + path + ": "));
}

TEST(DecodeBase64Test, DecodesPaddedUnpaddedAndWrappedInput) {
  EXPECT_EQ(DecodeBase64("").value(), "");
  EXPECT_EQ(DecodeBase64("Zg==").value(), "f");
  EXPECT_EQ(DecodeBase64("Zm8=").value(), "fo");
  EXPECT_EQ(DecodeBase64("Zm9v").value(), "foo");
  EXPECT_EQ(DecodeBase64("Zm9vYg").value(), "foob");  // padding optional
  EXPECT_EQ(DecodeBase64("Zm9v\nYmFy\r\n").value(), "foobar");
  EXPECT_EQ(DecodeBase64("+/+/").value(), "\xfb\xff\xbf");
  EXPECT_EQ(DecodeBase64("Zm9vY").status().message(), "invalid base64: truncated input");
  EXPECT_EQ(DecodeBase64("Zg==Zg").status().message(), "invalid base64: data after '=' padding");
  EXPECT_EQ(DecodeBase64("Zm-v").status().message(), "invalid base64 character '-'");
}

class InClusterTest : public ClusterConnectionTest {
 protected:
  void WriteAccount(bool with_namespace = true) {
    Write("sa/token", "sa-token\n");
    Write("sa/ca.crt", "ca");
    if (with_namespace) Write("sa/namespace", "kube-system\n");
  }
  std::string account() const { return (dir_ / "sa").string(); }
};

TEST_F(InClusterTest, ReadsTheServiceAccount) {
  WriteAccount();
  env_.Set("KUBERNETES_SERVICE_HOST", "10.96.0.1");
  env_.Set("KUBERNETES_SERVICE_PORT", "443");
  auto conn = LoadInCluster(account());
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();
  EXPECT_EQ(conn->server, "https://10.96.0.1:443");
  EXPECT_EQ(conn->token, "sa-token");
  EXPECT_EQ(conn->token_file, account() + "/token");
  EXPECT_EQ(conn->ca_file, account() + "/ca.crt");
  EXPECT_EQ(conn->namespace_, "kube-system");
  EXPECT_EQ(conn->source, "in-cluster");
}

TEST_F(InClusterTest, Ipv6HostIsBracketedAndNamespaceDefaults) {
  WriteAccount(/*with_namespace=*/false);
  env_.Set("KUBERNETES_SERVICE_HOST", "fd00::1");
  env_.Set("KUBERNETES_SERVICE_PORT", "6443");
  auto conn = LoadInCluster(account());
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();
  EXPECT_EQ(conn->server, "https://[fd00::1]:6443");
  EXPECT_EQ(conn->namespace_, "default");
}

TEST_F(InClusterTest, Errors) {
  EXPECT_EQ(LoadInCluster(account()).status().message(),
            "in-cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set");
  env_.Set("KUBERNETES_SERVICE_HOST", "10.96.0.1");
  env_.Set("KUBERNETES_SERVICE_PORT", "443");
  EXPECT_EQ(LoadInCluster(account()).status().message(),
            "in-cluster: cannot read service-account token " + account() + "/token");
  Write("sa/token", "t");
  EXPECT_EQ(LoadInCluster(account()).status().message(),
            "in-cluster: service-account CA " + account() + "/ca.crt missing");
}

TEST_F(InClusterTest, ResolveOrderFlagThenKubeconfigEnvThenInClusterThenHome) {
  const std::string flag_path = Write("flag-config", kKubeconfig);
  std::string home_text = kKubeconfig;
  home_text.replace(home_text.find("current-context: dev"), 20, "current-context: lab");
  Write("home/.kube/config", home_text);
  Write("lab-token", "flag-token");  // the lab user's tokenFile next to flag-config
  Write("home/.kube/lab-token", "home-token");
  WriteAccount();
  env_.Set("KUBERNETES_SERVICE_HOST", "10.96.0.1");
  env_.Set("KUBERNETES_SERVICE_PORT", "443");
  env_.Set("KUBECONFIG", (dir_ / "missing").string() + ":" + flag_path);

  // 1. The flag wins over everything, and --context applies to it.
  auto conn = ResolveConnection(flag_path, "lab", account());
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();
  EXPECT_EQ(conn->server, "https://lab.example");
  // A flag naming a missing file is an error, not a fallback.
  EXPECT_EQ(ResolveConnection((dir_ / "nope").string(), "", account()).status().code(),
            StatusCode::kNotFound);
  // 2. $KUBECONFIG: the first file of the list that exists.
  conn = ResolveConnection("", "", account());
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();
  EXPECT_EQ(conn->source, "kubeconfig " + flag_path + " (context dev)");
  // 3. In-cluster.
  env_.Set("KUBECONFIG", std::nullopt);
  conn = ResolveConnection("", "", account());
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();
  EXPECT_EQ(conn->source, "in-cluster");
  // 4. ~/.kube/config.
  env_.Set("KUBERNETES_SERVICE_HOST", std::nullopt);
  conn = ResolveConnection("", "", account());
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();
  EXPECT_EQ(conn->source, "kubeconfig " + (dir_ / "home/.kube/config").string() + " (context lab)");
  EXPECT_EQ(conn->token, "home-token");
}

TEST_F(InClusterTest, ResolveWithNothingListsWhatWasTried) {
  env_.Set("KUBECONFIG", (dir_ / "a").string() + ":" + (dir_ / "b").string());
  auto conn = ResolveConnection("", "", account());
  ASSERT_FALSE(conn.ok());
  EXPECT_EQ(conn.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(conn.status().message(),
            "no Kubernetes API server configured; tried --kubeconfig (not given), $KUBECONFIG (" +
                (dir_ / "a").string() + ":" + (dir_ / "b").string() +
                ": no such file), in-cluster (KUBERNETES_SERVICE_HOST unset), " +
                (dir_ / "home/.kube/config").string() + " (no such file)");
  env_.Set("KUBECONFIG", std::nullopt);
  env_.Set("KUBERNETES_SERVICE_HOST", "10.96.0.1");
  EXPECT_THAT(ResolveConnection("", "", account()).status().message(),
              HasSubstr("$KUBECONFIG (unset), in-cluster (" + account() + "/token: no such file)"));
}

}  // namespace
}  // namespace muster::kube
