#include "kube/cluster_connection.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

namespace muster::kube {
namespace {

namespace fs = std::filesystem;

std::string Trim(std::string s) {
  const auto space = [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; };
  while (!s.empty() && space(s.back())) s.pop_back();
  size_t start = 0;
  while (start < s.size() && space(s[start])) ++start;
  return s.substr(start);
}

std::string Quote(const std::string& s) { return "\"" + s + "\""; }

bool FileExists(const std::string& path) {
  std::error_code ec;
  return !path.empty() && fs::is_regular_file(path, ec);
}

// Like kubectl, relative paths in a kubeconfig are relative to the file's directory.
std::string ResolvePath(const fs::path& base_dir, const std::string& p) {
  if (p.empty() || fs::path(p).is_absolute()) return p;
  return (base_dir / p).lexically_normal().string();
}

// The entry named `name` of a kubeconfig list (clusters/users/contexts): the body under
// `body_key`, nullopt when there is no such entry. (A default YAML::Node is a defined
// Null node, truthy, so absence needs its own signal.)
std::optional<YAML::Node> FindNamed(const YAML::Node& root, const char* list_key,
                                    const char* body_key, const std::string& name) {
  const YAML::Node list = root[list_key];
  if (!list || !list.IsSequence()) return std::nullopt;
  for (const auto& entry : list) {
    if (entry.IsMap() && entry["name"] && entry["name"].as<std::string>() == name) {
      const YAML::Node body = entry[body_key];
      if (body && body.IsMap()) return body;
      return YAML::Node(YAML::NodeType::Map);
    }
  }
  return std::nullopt;
}

std::string StringField(const YAML::Node& node, const char* key) {
  const YAML::Node v = node[key];
  return v && v.IsScalar() ? v.as<std::string>() : std::string();
}

// Loads one credential or trust field given as base64 "<key>-data" or as a file path
// "<key>"; the data form wins, as in client-go. `where` prefixes error messages.
Status LoadDataOrFile(const YAML::Node& node, const std::string& key, const fs::path& base_dir,
                      const std::string& where, std::string* pem, std::string* file) {
  const std::string data = StringField(node, (key + "-data").c_str());
  if (!data.empty()) {
    auto decoded = DecodeBase64(data);
    if (!decoded.ok()) {
      return InvalidArgument(where + ": " + key + "-data: " + decoded.status().message());
    }
    *pem = std::move(decoded).value();
    return Status::Ok();
  }
  const std::string path = StringField(node, key.c_str());
  if (path.empty()) return Status::Ok();
  *file = ResolvePath(base_dir, path);
  if (!FileExists(*file)) return NotFound(where + ": " + key + " " + *file + ": no such file");
  return Status::Ok();
}

Result<ClusterConnection> ParseKubeconfig(const YAML::Node& root, const std::string& path,
                                          const std::string& context_flag) {
  const std::string file_where = "kubeconfig " + path;
  if (!root.IsMap()) return InvalidArgument(file_where + ": not a YAML mapping");
  const fs::path base_dir = fs::absolute(fs::path(path)).parent_path();

  std::string context_name = context_flag;
  if (context_name.empty()) context_name = StringField(root, "current-context");
  if (context_name.empty()) {
    return InvalidArgument(file_where + ": no current-context (and no --context given)");
  }
  const std::string ctx_where = file_where + ": context " + Quote(context_name);
  const auto found_context = FindNamed(root, "contexts", "context", context_name);
  if (!found_context) return NotFound(ctx_where + " not found");
  const YAML::Node& context = *found_context;

  const std::string cluster_name = StringField(context, "cluster");
  if (cluster_name.empty()) return InvalidArgument(ctx_where + ": no cluster");
  const std::string cluster_where = ctx_where + ": cluster " + Quote(cluster_name);
  const auto found_cluster = FindNamed(root, "clusters", "cluster", cluster_name);
  if (!found_cluster) return NotFound(cluster_where + " not found");
  const YAML::Node& cluster = *found_cluster;

  ClusterConnection conn;
  conn.server = StringField(cluster, "server");
  if (conn.server.empty()) return InvalidArgument(cluster_where + ": server is empty");
  if (conn.server.rfind("https://", 0) != 0 && conn.server.rfind("http://", 0) != 0) {
    return InvalidArgument(cluster_where + ": server " + Quote(conn.server) +
                           " is not an http(s):// URL");
  }
  if (const YAML::Node insecure = cluster["insecure-skip-tls-verify"]) {
    if (!YAML::convert<bool>::decode(insecure, conn.insecure_skip_tls_verify)) {
      return InvalidArgument(cluster_where + ": insecure-skip-tls-verify is not a boolean");
    }
  }
  if (Status s = LoadDataOrFile(cluster, "certificate-authority", base_dir, cluster_where,
                                &conn.ca_pem, &conn.ca_file);
      !s.ok()) {
    return s;
  }

  // A context may name no user (an unauthenticated or proxy endpoint).
  const std::string user_name = StringField(context, "user");
  if (!user_name.empty()) {
    const std::string user_where = ctx_where + ": user " + Quote(user_name);
    const auto found_user = FindNamed(root, "users", "user", user_name);
    if (!found_user) return NotFound(user_where + " not found");
    const YAML::Node& user = *found_user;
    if (Status s = LoadDataOrFile(user, "client-certificate", base_dir, user_where,
                                  &conn.client_cert_pem, &conn.client_cert_file);
        !s.ok()) {
      return s;
    }
    if (Status s = LoadDataOrFile(user, "client-key", base_dir, user_where, &conn.client_key_pem,
                                  &conn.client_key_file);
        !s.ok()) {
      return s;
    }
    const bool has_cert = !conn.client_cert_pem.empty() || !conn.client_cert_file.empty();
    const bool has_key = !conn.client_key_pem.empty() || !conn.client_key_file.empty();
    if (has_cert != has_key) {
      return InvalidArgument(user_where + ": client-certificate and client-key must be given " +
                             "together");
    }
    conn.token = StringField(user, "token");
    const std::string token_file = StringField(user, "tokenFile");
    if (!token_file.empty()) {
      conn.token_file = ResolvePath(base_dir, token_file);
      if (conn.token.empty()) {
        if (!ReadLocalFile(conn.token_file, &conn.token)) {
          return NotFound(user_where + ": tokenFile " + conn.token_file + ": cannot read");
        }
        conn.token = Trim(conn.token);
      }
    }
    if (conn.token.empty() && !has_cert && (user["exec"] || user["auth-provider"])) {
      return InvalidArgument(user_where +
                             ": exec and auth-provider credential plugins are not supported; "
                             "use a token, tokenFile or client certificate");
    }
  }
  conn.namespace_ = StringField(context, "namespace");
  if (conn.namespace_.empty()) conn.namespace_ = "default";
  conn.source = file_where + " (context " + context_name + ")";
  return conn;
}

}  // namespace

Result<ClusterConnection> LoadKubeconfig(const std::string& path, const std::string& context) {
  std::string text;
  if (!ReadLocalFile(path, &text)) return NotFound("kubeconfig " + path + ": cannot read file");
  try {
    return ParseKubeconfig(YAML::Load(text), path, context);
  } catch (const YAML::Exception& e) {
    return InvalidArgument("kubeconfig " + path + ": " + e.what());
  }
}

Result<ClusterConnection> LoadInCluster(const std::string& account_dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || *host == '\0' || port == nullptr || *port == '\0') {
    return FailedPrecondition(
        "in-cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set");
  }
  ClusterConnection conn;
  const std::string host_str = host;
  // An IPv6 literal needs brackets in a URL.
  const bool ipv6 = host_str.find(':') != std::string::npos && host_str.front() != '[';
  conn.server = "https://" + (ipv6 ? "[" + host_str + "]" : host_str) + ":" + port;
  const fs::path dir(account_dir);
  conn.token_file = (dir / "token").string();
  if (!ReadLocalFile(conn.token_file, &conn.token)) {
    return NotFound("in-cluster: cannot read service-account token " + conn.token_file);
  }
  conn.token = Trim(conn.token);
  if (conn.token.empty()) return InvalidArgument("in-cluster: " + conn.token_file + " is empty");
  const std::string ca = (dir / "ca.crt").string();
  if (!FileExists(ca)) return NotFound("in-cluster: service-account CA " + ca + " missing");
  conn.ca_file = ca;
  std::string ns;
  if (ReadLocalFile((dir / "namespace").string(), &ns)) conn.namespace_ = Trim(ns);
  if (conn.namespace_.empty()) conn.namespace_ = "default";
  conn.source = "in-cluster";
  return conn;
}

Result<ClusterConnection> ResolveConnection(const std::string& kubeconfig_flag,
                                            const std::string& context,
                                            const std::string& account_dir) {
  if (!kubeconfig_flag.empty()) return LoadKubeconfig(kubeconfig_flag, context);

  std::vector<std::string> tried;
  // $KUBECONFIG: the first file of the list that exists. kubectl merges all of them;
  // muster takes one file, which covers the common single-file and "extra file" uses.
  if (const char* env = std::getenv("KUBECONFIG"); env != nullptr && *env != '\0') {
    std::stringstream list(env);
    std::string entry;
    while (std::getline(list, entry, ':')) {
      if (FileExists(entry)) return LoadKubeconfig(entry, context);
    }
    tried.push_back("$KUBECONFIG (" + std::string(env) + ": no such file)");
  } else {
    tried.push_back("$KUBECONFIG (unset)");
  }

  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const std::string token_path = (fs::path(account_dir) / "token").string();
  if (host != nullptr && *host != '\0' && FileExists(token_path)) {
    return LoadInCluster(account_dir);
  }
  tried.push_back(host == nullptr || *host == '\0'
                      ? "in-cluster (KUBERNETES_SERVICE_HOST unset)"
                      : "in-cluster (" + token_path + ": no such file)");

  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    const std::string default_path = (fs::path(home) / ".kube" / "config").string();
    if (FileExists(default_path)) return LoadKubeconfig(default_path, context);
    tried.push_back(default_path + " (no such file)");
  } else {
    tried.push_back("~/.kube/config ($HOME unset)");
  }

  std::string message = "no Kubernetes API server configured; tried --kubeconfig (not given)";
  for (const auto& t : tried) message += ", " + t;
  return NotFound(message);
}

bool ReadLocalFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

}  // namespace muster::kube
