// The core kinds pods read (ConfigMap, Secret, Service, PersistentVolumeClaim,
// ServiceAccount) through the API: upstream's validation messages, defaulting,
// immutability, the Service address and claim binding, warnings and Table columns.
#include <gtest/gtest.h>

#include "api_fixture.h"
#include "core/base64.h"
#include "server/core_defaults.h"
#include "server/core_validation.h"

namespace muster::server {
namespace {

using nlohmann::json;

class CoreKindsTest : public testing::ApiFixture {
 protected:
  static std::string Causes(const ApiResponse& r) {
    json b = Body(r);
    if (!b.contains("details") || !b["details"].contains("causes")) return "no causes: " + r.body;
    std::string out;
    for (const auto& c : b["details"]["causes"]) {
      if (!out.empty()) out += "\n";
      out += c.value("field", "") + ": " + c.value("message", "");
    }
    return out;
  }
  ApiResponse Post(const std::string& plural, const json& object) {
    return Call("POST", "/api/v1/namespaces/default/" + plural, object.dump());
  }
  ApiResponse Put(const std::string& plural, const std::string& name, const json& object) {
    return Call("PUT", "/api/v1/namespaces/default/" + plural + "/" + name, object.dump());
  }
  // The cells of the Table row of `plural`/`name`, by column name.
  json Row(const std::string& plural, const std::string& name) {
    auto r = Call("GET", "/api/v1/namespaces/default/" + plural + "/" + name, "",
                  "application/json", "application/json;as=Table;v=v1;g=meta.k8s.io");
    json table = Body(r);
    json row = json::object();
    for (size_t i = 0; i < table["columnDefinitions"].size(); ++i) {
      row[table["columnDefinitions"][i]["name"].get<std::string>()] = table["rows"][0]["cells"][i];
    }
    row["columns"] = json::array();
    for (const auto& c : table["columnDefinitions"]) row["columns"].push_back(c["name"]);
    return row;
  }
  static json ConfigMap(const std::string& name, json data) {
    return {{"apiVersion", "v1"},
            {"kind", "ConfigMap"},
            {"metadata", {{"name", name}}},
            {"data", std::move(data)}};
  }
  static json Service(const std::string& name, json spec) {
    return {{"apiVersion", "v1"},
            {"kind", "Service"},
            {"metadata", {{"name", name}}},
            {"spec", std::move(spec)}};
  }
  static json Claim(const std::string& name, json spec) {
    return {{"apiVersion", "v1"},
            {"kind", "PersistentVolumeClaim"},
            {"metadata", {{"name", name}}},
            {"spec", std::move(spec)}};
  }
};

TEST_F(CoreKindsTest, ConfigMapKeysAndSizeAreUpstreams) {
  auto bad = Post("configmaps", ConfigMap("cm", {{"a b", "1"}, {"..x", "2"}}));
  ASSERT_EQ(bad.code, 422) << bad.body;
  EXPECT_EQ(Causes(bad),
            "data[..x]: Invalid value: \"..x\": must not start with '..'\n"
            "data[a b]: Invalid value: \"a b\": a valid config key must consist of alphanumeric "
            "characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex "
            "used for validation is '[-._a-zA-Z0-9]+')");
  EXPECT_EQ(Body(bad)["message"].get<std::string>().rfind("ConfigMap \"cm\" is invalid: [", 0), 0u);
  auto big = Post("configmaps", ConfigMap("big", {{"k", std::string(kMaxConfigDataBytes, 'x')}}));
  ASSERT_EQ(big.code, 422);
  EXPECT_EQ(Causes(big), ": Too long: must have at most 1048576 bytes");
  auto ok = Post("configmaps", ConfigMap("cm", {{"key.name", "v"}, {"KEY_NAME", "w"}}));
  EXPECT_EQ(ok.code, 201) << ok.body;
  EXPECT_EQ(Row("configmaps", "cm")["Data"], 2);
  EXPECT_EQ(Row("configmaps", "cm")["columns"], json({"Name", "Data", "Age"}));
}

TEST_F(CoreKindsTest, ImmutableConfigMapKeepsItsData) {
  json cm = ConfigMap("frozen", {{"k", "v"}});
  cm["immutable"] = true;
  ASSERT_EQ(Post("configmaps", cm).code, 201);
  cm["data"]["k"] = "changed";
  auto r = Put("configmaps", "frozen", cm);
  ASSERT_EQ(r.code, 422);
  EXPECT_EQ(Causes(r), "data: Forbidden: field is immutable when `immutable` is set");
  auto patch = Call("PATCH", "/api/v1/namespaces/default/configmaps/frozen",
                    R"({"immutable":false})", "application/merge-patch+json");
  EXPECT_EQ(patch.code, 422);
  // Labels may still change.
  auto labels = Call("PATCH", "/api/v1/namespaces/default/configmaps/frozen",
                     R"({"metadata":{"labels":{"a":"b"}}})", "application/merge-patch+json");
  EXPECT_EQ(labels.code, 200) << labels.body;
}

TEST_F(CoreKindsTest, SecretStringDataIsMergedIntoDataAndTypeIsFixed) {
  json secret = {{"apiVersion", "v1"},
                 {"kind", "Secret"},
                 {"metadata", {{"name", "s"}}},
                 {"data", {{"a", EncodeBase64("old")}, {"b", EncodeBase64("kept")}}},
                 {"stringData", {{"a", "new"}}}};
  auto r = Post("secrets", secret);
  ASSERT_EQ(r.code, 201) << r.body;
  json stored = *store_->Get({"secrets", "default", "s"});
  EXPECT_FALSE(stored.contains("stringData"));
  EXPECT_EQ(stored["data"]["a"], EncodeBase64("new"));
  EXPECT_EQ(stored["data"]["b"], EncodeBase64("kept"));
  EXPECT_EQ(stored["type"], "Opaque");
  json row = Row("secrets", "s");
  EXPECT_EQ(row["Type"], "Opaque");
  EXPECT_EQ(row["Data"], 2);
  stored["type"] = "example.com/token";
  auto changed = Put("secrets", "s", stored);
  ASSERT_EQ(changed.code, 422);
  EXPECT_NE(Causes(changed).find("type: Invalid value: \"example.com/token\": field is immutable"),
            std::string::npos)
      << Causes(changed);
  auto tls = Post("secrets", {{"metadata", {{"name", "t"}}}, {"type", "kubernetes.io/tls"}});
  ASSERT_EQ(tls.code, 422);
  EXPECT_EQ(Causes(tls), "data[tls.key]: Required value\ndata[tls.crt]: Required value");
  auto not64 = Post("secrets", {{"metadata", {{"name", "u"}}}, {"data", {{"k", "%%%"}}}});
  EXPECT_EQ(not64.code, 422) << not64.body;
}

TEST_F(CoreKindsTest, ServicePortsTypeAndNameAreValidated) {
  auto r = Post("services",
                Service("svc", {{"ports", {{{"port", 0}}, {{"port", 80}, {"protocol", "HTTP"}}}}}));
  ASSERT_EQ(r.code, 422);
  EXPECT_EQ(Causes(r),
            "spec.ports[0].name: Required value\n"
            "spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive\n"
            // defaulted from the port, as upstream does
            "spec.ports[0].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive\n"
            "spec.ports[1].name: Required value\n"
            "spec.ports[1].protocol: Unsupported value: \"HTTP\": supported values: \"SCTP\", "
            "\"TCP\", \"UDP\"");
  auto dup = Post(
      "services",
      Service("svc", {{"ports", {{{"name", "a"}, {"port", 80}}, {{"name", "a"}, {"port", 81}}}}}));
  EXPECT_EQ(Causes(dup), "spec.ports[1].name: Duplicate value: \"a\"");
  auto type = Post("services", Service("svc", {{"type", "Magic"}, {"ports", {{{"port", 80}}}}}));
  EXPECT_EQ(Causes(type),
            "spec.type: Unsupported value: \"Magic\": supported values: \"ClusterIP\", "
            "\"ExternalName\", \"LoadBalancer\", \"NodePort\"");
  auto name = Post("services", Service("1svc", {{"ports", {{{"port", 80}}}}}));
  EXPECT_NE(Causes(name).find("metadata.name: Invalid value: \"1svc\": a DNS-1035 label"),
            std::string::npos);
  auto no_ports = Post("services", Service("svc", json::object()));
  EXPECT_EQ(Causes(no_ports), "spec.ports: Required value");
  auto foreign =
      Post("services", Service("svc", {{"clusterIP", "192.168.1.1"}, {"ports", {{{"port", 80}}}}}));
  EXPECT_NE(Causes(foreign).find("provided IP is not in the valid range. The range of valid IPs "
                                 "is 10.96.0.0/12"),
            std::string::npos);
}

TEST_F(CoreKindsTest, ServiceGetsAnAddressThatCannotChange) {
  auto r =
      Post("services", Service("svc", {{"selector", {{"app", "x"}}}, {"ports", {{{"port", 80}}}}}));
  ASSERT_EQ(r.code, 201) << r.body;
  EXPECT_FALSE(r.warnings.empty());  // the address is not routed: said, not hidden
  json stored = *store_->Get({"services", "default", "svc"});
  const std::string ip = stored["spec"]["clusterIP"];
  EXPECT_TRUE(InServiceRange(ip)) << ip;
  EXPECT_EQ(stored["spec"]["type"], "ClusterIP");
  EXPECT_EQ(stored["spec"]["ports"][0]["protocol"], "TCP");
  EXPECT_EQ(stored["spec"]["ports"][0]["targetPort"], 80);
  json row = Row("services", "svc");
  EXPECT_EQ(row["columns"],
            json({"Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age", "Selector"}));
  EXPECT_EQ(row["Cluster-IP"], ip);
  EXPECT_EQ(row["External-IP"], "<none>");
  EXPECT_EQ(row["Port(s)"], "80/TCP");
  // An update that leaves the address out keeps it; one that changes it is refused.
  json update = Service("svc", {{"selector", {{"app", "y"}}}, {"ports", {{{"port", 80}}}}});
  auto kept = Put("services", "svc", update);
  ASSERT_EQ(kept.code, 200) << kept.body;
  EXPECT_EQ(Body(kept)["spec"]["clusterIP"], ip);
  update["spec"]["clusterIP"] = "None";
  auto changed = Put("services", "svc", update);
  ASSERT_EQ(changed.code, 422);
  EXPECT_EQ(Causes(changed), "spec.clusterIP: Invalid value: \"None\": field is immutable");
  // The same address asked for again is taken.
  auto taken = Post("services", Service("other", {{"clusterIP", ip}, {"ports", {{{"port", 80}}}}}));
  ASSERT_EQ(taken.code, 422);
  EXPECT_NE(Causes(taken).find("provided IP is already allocated"), std::string::npos);
}

TEST_F(CoreKindsTest, HeadlessServiceNeedsNoPorts) {
  auto r = Post("services", Service("pytorch-ddp-svc",
                                    {{"clusterIP", "None"}, {"selector", {{"job-name", "ddp"}}}}));
  ASSERT_EQ(r.code, 201) << r.body;
  EXPECT_TRUE(r.warnings.empty());
  json row = Row("services", "pytorch-ddp-svc");
  EXPECT_EQ(row["Cluster-IP"], "None");
  EXPECT_EQ(row["Port(s)"], "<none>");
}

TEST_F(CoreKindsTest, ClaimIsValidatedBoundAndOnlyGrows) {
  auto bad = Post("persistentvolumeclaims", Claim("c", {{"accessModes", {"ReadWriteSometimes"}}}));
  ASSERT_EQ(bad.code, 422);
  EXPECT_EQ(Causes(bad),
            "spec.accessModes: Unsupported value: \"ReadWriteSometimes\": supported values: "
            "\"ReadOnlyMany\", \"ReadWriteMany\", \"ReadWriteOnce\", \"ReadWriteOncePod\"\n"
            "spec.resources[storage]: Required value");
  auto none = Post("persistentvolumeclaims",
                   Claim("c", {{"resources", {{"requests", {{"storage", "1Gi"}}}}}}));
  EXPECT_EQ(Causes(none), "spec.accessModes: Required value: at least 1 access mode is required");
  json claim = Claim("data", {{"accessModes", {"ReadWriteOnce"}},
                              {"resources", {{"requests", {{"storage", "1Gi"}}}}}});
  auto r = Post("persistentvolumeclaims", claim);
  ASSERT_EQ(r.code, 201) << r.body;
  json stored = *store_->Get({"persistentvolumeclaims", "default", "data"});
  EXPECT_EQ(stored["status"]["phase"], "Bound");
  EXPECT_EQ(stored["status"]["capacity"]["storage"], "1Gi");
  EXPECT_EQ(stored["spec"]["storageClassName"], kDefaultStorageClass);
  const std::string volume = stored["spec"]["volumeName"];
  EXPECT_EQ(volume.rfind("pvc-", 0), 0u);
  json row = Row("persistentvolumeclaims", "data");
  EXPECT_EQ(row["columns"], json({"Name", "Status", "Volume", "Capacity", "Access Modes",
                                  "StorageClass", "VolumeAttributesClass", "Age", "VolumeMode"}));
  EXPECT_EQ(row["Status"], "Bound");
  EXPECT_EQ(row["Access Modes"], "RWO");
  // Growing the request is allowed; shrinking it or changing anything else is not.
  claim["spec"]["resources"]["requests"]["storage"] = "2Gi";
  EXPECT_EQ(Put("persistentvolumeclaims", "data", claim).code, 200);
  claim["spec"]["resources"]["requests"]["storage"] = "1Gi";
  auto shrink = Put("persistentvolumeclaims", "data", claim);
  EXPECT_EQ(
      Causes(shrink),
      "spec.resources.requests.storage: Forbidden: field can not be less than previous value");
  claim["spec"]["resources"]["requests"]["storage"] = "2Gi";
  claim["spec"]["accessModes"] = {"ReadWriteMany"};
  auto modes = Put("persistentvolumeclaims", "data", claim);
  EXPECT_EQ(Causes(modes),
            "spec: Forbidden: spec is immutable after creation except resources.requests and "
            "volumeAttributesClassName for bound claims");
}

TEST_F(CoreKindsTest, ServiceAccountIsStoredWithWarnings) {
  auto r = Post("serviceaccounts",
                {{"metadata", {{"name", "runner"}}}, {"automountServiceAccountToken", true}});
  ASSERT_EQ(r.code, 201) << r.body;
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("automountServiceAccountToken is not acted on"), std::string::npos);
  EXPECT_EQ(Row("serviceaccounts", "runner")["Secrets"], 0);
}

TEST_F(CoreKindsTest, DiscoveryServesTheShortNames) {
  json list = Body(Call("GET", "/api/v1"));
  std::map<std::string, json> by_name;
  for (const auto& r : list["resources"]) by_name[r["name"]] = r;
  EXPECT_EQ(by_name["configmaps"]["shortNames"], json({"cm"}));
  EXPECT_EQ(by_name["services"]["shortNames"], json({"svc"}));
  EXPECT_EQ(by_name["persistentvolumeclaims"]["shortNames"], json({"pvc"}));
  EXPECT_EQ(by_name["resourcequotas"]["shortNames"], json({"quota"}));
  EXPECT_EQ(by_name["serviceaccounts"]["shortNames"], json({"sa"}));
  EXPECT_TRUE(by_name.count("secrets"));
  EXPECT_TRUE(by_name.count("services/status"));
  EXPECT_TRUE(by_name.count("persistentvolumeclaims/status"));
  EXPECT_TRUE(by_name.count("resourcequotas/status"));
  EXPECT_FALSE(by_name.count("configmaps/status"));
}

// kube-apiserver stores a Pod with its defaults (SetDefaults_Pod, _PodSpec,
// _Container), and what it stored goes back in without a warning about them.
TEST_F(CoreKindsTest, APodIsStoredWithUpstreamsDefaults) {
  json pod = {{"metadata", {{"name", "p"}}},
              {"spec",
               {{"restartPolicy", "Never"},
                {"containers",
                 {{{"name", "main"},
                   {"image", "busybox"},
                   {"ports", {{{"containerPort", 80}}}},
                   {"resources", {{"limits", {{"cpu", "1"}, {"memory", "64Mi"}}}}}}}}}}};
  ApiResponse r = Post("pods", pod);
  ASSERT_EQ(r.code, 201) << r.body;
  EXPECT_TRUE(r.warnings.empty()) << r.warnings.front();
  const json spec = Body(r)["spec"];
  EXPECT_EQ(spec["containers"][0]["resources"]["requests"],
            json({{"cpu", "1"}, {"memory", "64Mi"}}));
  EXPECT_EQ(spec["containers"][0]["imagePullPolicy"], "Always");  // no tag: latest
  EXPECT_EQ(spec["containers"][0]["terminationMessagePath"], "/dev/termination-log");
  EXPECT_EQ(spec["containers"][0]["ports"][0]["protocol"], "TCP");
  EXPECT_EQ(spec["restartPolicy"], "Never");  // kept
  EXPECT_EQ(spec["dnsPolicy"], "ClusterFirst");
  EXPECT_EQ(spec["terminationGracePeriodSeconds"], 30);
  EXPECT_EQ(spec["schedulerName"], "default-scheduler");
  EXPECT_EQ(spec["serviceAccountName"], "default");
  EXPECT_EQ(spec["securityContext"], json::object());

  // The stored object, as `kubectl get -o yaml` shows it, created again: no warning.
  json again = Body(r);
  again["metadata"] = {{"name", "q"}};
  again.erase("status");
  r = Post("pods", again);
  ASSERT_EQ(r.code, 201) << r.body;
  EXPECT_TRUE(r.warnings.empty()) << r.warnings.front();

  // A pod's own restartPolicy unset: Always, acted on (its container restarts in
  // place), so no warning.
  pod["metadata"]["name"] = "r";
  pod["spec"].erase("restartPolicy");
  r = Post("pods", pod);
  ASSERT_EQ(r.code, 201) << r.body;
  EXPECT_EQ(Body(r)["spec"]["restartPolicy"], "Always");
  EXPECT_TRUE(r.warnings.empty()) << r.warnings.front();
  // Priority admission: no class, no global default.
  EXPECT_EQ(Body(r)["spec"]["priority"], 0);
}

}  // namespace
}  // namespace muster::server
