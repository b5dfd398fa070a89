#include "workloads/container_env.h"

#include <gtest/gtest.h>

#include <map>

namespace muster::workloads {
namespace {

using Env = std::vector<std::pair<std::string, std::string>>;

VariableLookup MapLookup(const std::map<std::string, std::string>& vars) {
  return [&vars](std::string_view name) -> const std::string* {
    auto it = vars.find(std::string(name));
    return it == vars.end() ? nullptr : &it->second;
  };
}

// Upstream's table (third_party/forked/golang/expansion/expand_test.go), the same
// inputs and expected outputs.
TEST(ExpandVariables, UpstreamCases) {
  const std::map<std::string, std::string> vars = {
      {"VAR_A", "A"}, {"VAR_B", "B"}, {"VAR_C", "C"}, {"VAR_REF", "$(VAR_A)"}, {"VAR_EMPTY", ""}};
  struct Case {
    const char* name;
    const char* input;
    const char* want;
  };
  const Case cases[] = {
      {"whole string", "$(VAR_A)", "A"},
      {"repeat", "$(VAR_A)-$(VAR_A)", "A-A"},
      {"beginning", "$(VAR_A)-1", "A-1"},
      {"middle", "___$(VAR_B)___", "___B___"},
      {"end", "___$(VAR_C)", "___C"},
      {"compound", "$(VAR_A)_$(VAR_B)_$(VAR_C)", "A_B_C"},
      {"escape & expand", "$$(VAR_B)_$(VAR_A)", "$(VAR_B)_A"},
      {"compound escape", "$$(VAR_A)_$$(VAR_B)", "$(VAR_A)_$(VAR_B)"},
      {"mixed in escapes", "f000-$$VAR_A", "f000-$VAR_A"},
      {"backslash escape ignored", "foo\\$(VAR_C)bar", "foo\\Cbar"},
      {"backslash escape ignored 2", "foo\\\\$(VAR_C)bar", "foo\\\\Cbar"},
      {"lots of backslashes", "foo\\\\\\\\$(VAR_A)bar", "foo\\\\\\\\Abar"},
      {"nested var references", "$(VAR_A$(VAR_B))", "$(VAR_A$(VAR_B))"},
      {"nested var references second type", "$(VAR_A$(VAR_B)", "$(VAR_A$(VAR_B)"},
      {"value is a reference", "$(VAR_REF)", "$(VAR_A)"},
      {"value is a reference x 2", "%%$(VAR_REF)--$(VAR_REF)%%", "%%$(VAR_A)--$(VAR_A)%%"},
      {"empty var", "foo$(VAR_EMPTY)bar", "foobar"},
      {"unterminated expression", "foo$(VAR_Awhoops!", "foo$(VAR_Awhoops!"},
      {"expression without operator", "f00__(VAR_A)__", "f00__(VAR_A)__"},
      {"shell special vars pass through", "$?_boo_$!", "$?_boo_$!"},
      {"bare operators are ignored", "$VAR_A", "$VAR_A"},
      {"undefined vars are passed through", "$(VAR_DNE)", "$(VAR_DNE)"},
      {"multiple (even) operators, var undefined", "$$$$$$(BIG_MONEY)", "$$$(BIG_MONEY)"},
      {"multiple (even) operators, var defined", "$$$$$$(VAR_A)", "$$$(VAR_A)"},
      {"multiple (odd) operators, var undefined", "$$$$$$$(GOOD_ODDS)", "$$$$(GOOD_ODDS)"},
      {"multiple (odd) operators, var defined", "$$$$$$$(VAR_A)", "$$$A"},
      {"missing open expression", "$VAR_A)", "$VAR_A)"},
      {"shell syntax ignored", "${VAR_A}", "${VAR_A}"},
      {"trailing incomplete expression not consumed", "$(VAR_B)_______$(A", "B_______$(A"},
      {"trailing incomplete expression, no content", "$(VAR_C)_______$(", "C_______$("},
      {"operator at end of input string is preserved", "$(VAR_A)foobarzab$", "Afoobarzab$"},
      {"shell escaped incomplete expr", "foo-\\$(VAR_A", "foo-\\$(VAR_A"},
      {"lots of $( in middle", "--$($($($($--", "--$($($($($--"},
      {"lots of $( in beginning", "$($($($($--foo$(", "$($($($($--foo$("},
      {"lots of $( at end", "foo0--$($($($(", "foo0--$($($($("},
      {"escaped operators in variable names are not escaped", "$(foo$$var)", "$(foo$$var)"},
      {"newline not expanded", "\n", "\n"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ExpandVariables(c.input, MapLookup(vars)), c.want) << c.name;
  }
}

class FakeConfig : public ConfigLookup {
 public:
  std::map<std::string, model::StringMap> config_maps, secrets;
  const model::StringMap* ConfigMap(const std::string& name) const override {
    auto it = config_maps.find(name);
    return it == config_maps.end() ? nullptr : &it->second;
  }
  const model::StringMap* Secret(const std::string& name) const override {
    auto it = secrets.find(name);
    return it == secrets.end() ? nullptr : &it->second;
  }
};

model::EnvVar Plain(std::string name, std::string value) {
  model::EnvVar v;
  v.name = std::move(name);
  v.value = std::move(value);
  return v;
}

model::EnvVar Field(std::string name, std::string path) {
  model::EnvVar v;
  v.name = std::move(name);
  v.value_from = model::EnvVarSource{};
  v.value_from->field_path = std::move(path);
  return v;
}

PodFacts Facts() {
  PodFacts pod;
  pod.name = "pytorch-ddp-0";
  pod.namespace_ = "default";
  pod.uid = "u-1";
  pod.node_name = "node-a";
  pod.pod_ip = "127.64.0.2";
  pod.host_ip = "127.0.0.1";
  pod.labels = {{"job-name", "pytorch-ddp"}, {"team", "a\"b"}};
  pod.annotations = {{"batch.kubernetes.io/job-completion-index", "0"}};
  pod.node_allocatable = {{"cpu", *Quantity::Parse("8")}, {"memory", *Quantity::Parse("16Gi")}};
  return pod;
}

// The kubelet's order: envFrom, then env in order (a value sees only earlier
// variables), then what the controller appended; command and args see everything.
TEST(ResolveContainer, ExpandsCommandArgsAndEnvLikeTheKubelet) {
  model::Container c;
  c.name = "worker";
  c.command = {"torchrun", "--node_rank=$(JOB_COMPLETION_INDEX)", "$$(LITERAL)"};
  c.args = {"--master=$(MASTER_ADDR):$(MASTER_PORT)", "$(UNDEFINED)"};
  c.env = {Plain("FOO", "bar"),      Plain("ZOO", "$(FOO)-1"),
           Plain("BLU", "$(ZOO)-2"), Plain("EARLY", "$(LATER)"),
           Plain("LATER", "x"),      Plain("IDX", "$(JOB_COMPLETION_INDEX)")};
  model::PodSpec spec;
  spec.containers = {c};
  FakeConfig config;
  auto r = ResolveContainer(spec, c, Facts(), config,
                            {{"JOB_COMPLETION_INDEX", "1"},
                             {"MASTER_ADDR", "pytorch-ddp-0.pytorch-ddp-svc"},
                             {"MASTER_PORT", "29500"},
                             {"FOO", "ignored: the template defines FOO"}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->command, (std::vector<std::string>{"torchrun", "--node_rank=1", "$(LITERAL)"}));
  EXPECT_EQ(r->args, (std::vector<std::string>{"--master=pytorch-ddp-0.pytorch-ddp-svc:29500",
                                               "$(UNDEFINED)"}));
  EXPECT_EQ(r->env, (Env{{"FOO", "bar"},
                         {"ZOO", "bar-1"},
                         {"BLU", "bar-1-2"},
                         {"EARLY", "$(LATER)"},
                         {"LATER", "x"},
                         {"IDX", "$(JOB_COMPLETION_INDEX)"},
                         {"JOB_COMPLETION_INDEX", "1"},
                         {"MASTER_ADDR", "pytorch-ddp-0.pytorch-ddp-svc"},
                         {"MASTER_PORT", "29500"}}));
}

TEST(ResolveContainer, DownwardApiFieldRefs) {
  model::Container c;
  c.env = {Field("NAME", "metadata.name"),
           Field("NS", "metadata.namespace"),
           Field("UID", "metadata.uid"),
           Field("NODE", "spec.nodeName"),
           Field("IP", "status.podIP"),
           Field("HOST", "status.hostIP"),
           Field("JOB", "metadata.labels['job-name']"),
           Field("INDEX", "metadata.annotations['batch.kubernetes.io/job-completion-index']"),
           Field("MISSING", "metadata.labels['nope']"),
           Plain("GREETING", "hi $(NAME) on $(NODE)")};
  model::PodSpec spec;
  FakeConfig config;
  auto r = ResolveContainer(spec, c, Facts(), config, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->env, (Env{{"NAME", "pytorch-ddp-0"},
                         {"NS", "default"},
                         {"UID", "u-1"},
                         {"NODE", "node-a"},
                         {"IP", "127.64.0.2"},
                         {"HOST", "127.0.0.1"},
                         {"JOB", "pytorch-ddp"},
                         {"INDEX", "0"},
                         {"MISSING", ""},
                         {"GREETING", "hi pytorch-ddp-0 on node-a"}}));

  c.env = {Field("LABELS", "metadata.labels")};  // whole maps only in volumes
  auto bad = ResolveContainer(spec, c, Facts(), config, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(
      bad.status().message().find("env LABELS: fieldPath \"metadata.labels\" is not supported"),
      std::string::npos)
      << bad.status().message();
}

TEST(DownwardFieldValue, VolumeFormatsWholeMapsLikeFormatMap) {
  auto labels = DownwardFieldValue(Facts(), "metadata.labels", /*for_volume=*/true);
  ASSERT_TRUE(labels.ok());
  EXPECT_EQ(*labels, "job-name=\"pytorch-ddp\"\nteam=\"a\\\"b\"");
  EXPECT_FALSE(DownwardFieldValue(Facts(), "status.podIP", /*for_volume=*/true).ok());
}

TEST(ResourceFieldValue, RoundsUpAndFallsBackToAllocatable) {
  model::Container c;
  c.name = "main";
  c.requests = {{"cpu", *Quantity::Parse("250m")}, {"memory", *Quantity::Parse("1Gi")}};
  c.limits = {{"cpu", *Quantity::Parse("1500m")}};
  PodFacts pod = Facts();
  auto value = [&](const std::string& resource, std::optional<Quantity> divisor = std::nullopt) {
    auto r = ResourceFieldValue(c, pod, resource, divisor);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? *r : "";
  };
  EXPECT_EQ(value("limits.cpu"), "2");  // ceil(1.5)
  EXPECT_EQ(value("limits.cpu", *Quantity::Parse("1m")), "1500");
  EXPECT_EQ(value("requests.cpu"), "1");  // ceil(0.25)
  EXPECT_EQ(value("requests.memory", *Quantity::Parse("1Mi")), "1024");
  EXPECT_EQ(value("limits.memory"), std::to_string(16LL << 30));  // node allocatable
  EXPECT_EQ(value("requests.ephemeral-storage"), "0");
  auto bad = ResourceFieldValue(c, pod, "limits.gpu", std::nullopt);
  EXPECT_FALSE(bad.ok());
}

TEST(ResolveContainer, ConfigMapsAndSecrets) {
  FakeConfig config;
  config.config_maps["settings"] = {{"LR", "0.1"}, {"bad=key", "x"}, {"EPOCHS", "3"}};
  config.secrets["token"] = {{"value", "s3cret"}};
  model::Container c;
  model::EnvFromSource from;
  from.config_map = "settings";
  from.prefix = "CFG_";
  c.env_from = {from};
  model::EnvVar tok;
  tok.name = "TOKEN";
  tok.value_from = model::EnvVarSource{};
  tok.value_from->secret_key = model::KeySelector{"token", "value", false};
  model::EnvVar opt;
  opt.name = "OPTIONAL";
  opt.value_from = model::EnvVarSource{};
  opt.value_from->config_map_key = model::KeySelector{"settings", "absent", true};
  c.env = {tok, opt, Plain("LR_FLAG", "--lr=$(CFG_LR)")};
  model::PodSpec spec;
  auto r = ResolveContainer(spec, c, Facts(), config, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(
      r->env,
      (Env{{"CFG_EPOCHS", "3"}, {"CFG_LR", "0.1"}, {"TOKEN", "s3cret"}, {"LR_FLAG", "--lr=0.1"}}));
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_NE(r->warnings[0].find("Keys [bad=key]"), std::string::npos) << r->warnings[0];

  // Not optional: the kubelet's CreateContainerConfigError.
  tok.value_from->secret_key = model::KeySelector{"token", "other", false};
  c.env = {tok};
  auto missing_key = ResolveContainer(spec, c, Facts(), config, {});
  ASSERT_FALSE(missing_key.ok());
  EXPECT_EQ(missing_key.status().message(),
            "env TOKEN: couldn't find key other in Secret default/token");
  c.env.clear();
  c.env_from[0].config_map = "absent";
  auto missing = ResolveContainer(spec, c, Facts(), config, {});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "configmap \"absent\" not found (envFrom)");
  c.env_from[0].optional = true;
  EXPECT_TRUE(ResolveContainer(spec, c, Facts(), config, {}).ok());
}

}  // namespace
}  // namespace muster::workloads
