// The deployment examples agree with the image and with the binary: the
// Dockerfile's entrypoint, socket path, volume and port are what
// docker/compose.yaml and docker/kubernetes/ use, every BATON_* variable and
// flag they pass is one `baton run --help` lists, and the settings they give
// baton pass `baton check-config`. Nothing is deployed; the image itself is
// tested by image-test.sh (label deploy).
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "manifests_support.hpp"

namespace baton::deploy {
namespace {

namespace fs = std::filesystem;

const std::string source_dir = BATON_SOURCE_DIR;
const std::string built_baton = BATON_BINARY;

class Manifests : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    image = new dockerfile_facts(read_dockerfile(source_dir + "/Dockerfile"));
    cli = new cli_facts(read_cli(built_baton));
  }
  static void TearDownTestSuite() {
    delete image;
    delete cli;
  }

  // The socket path, its directory and the HTTP port the image is built for.
  static std::string socket_path() { return image->env.at("BATON_SOCKET_PATH"); }
  static std::string socket_dir() { return fs::path(socket_path()).parent_path().string(); }
  static int http_port() { return image->exposed_ports.empty() ? -1 : image->exposed_ports.front(); }

  static void expect_known(const std::string& variable, const std::string& where) {
    if (variable.rfind("BATON_", 0) != 0) return;
    EXPECT_TRUE(cli->variables.count(variable) == 1)
        << where << ": " << variable << " is not a variable `baton run --help` lists";
  }
  static void expect_flags_known(const std::vector<std::string>& args, const std::string& where) {
    for (const auto& flag : flags_in(args)) {
      EXPECT_TRUE(cli->flags.count(flag) == 1) << where << ": " << flag << " is not a flag of `baton run`";
    }
  }

  static dockerfile_facts* image;
  static cli_facts* cli;
};
dockerfile_facts* Manifests::image = nullptr;
cli_facts* Manifests::cli = nullptr;

std::vector<std::string> kubernetes_files() {
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(source_dir + "/docker/kubernetes")) {
    const auto ext = entry.path().extension();
    if (ext == ".yaml" || ext == ".yml") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<YAML::Node> kubernetes_objects() {
  std::vector<YAML::Node> objects;
  for (const auto& file : kubernetes_files()) {
    for (const auto& doc : load_documents(file)) {
      if (doc && !doc.IsNull()) objects.push_back(doc);
    }
  }
  return objects;
}

YAML::Node find_object(const std::vector<YAML::Node>& objects, const std::string& kind,
                       const std::string& name) {
  for (const auto& object : objects) {
    if (object["kind"].as<std::string>() == kind && object["metadata"]["name"].as<std::string>() == name) {
      return object;
    }
  }
  return YAML::Node();
}

bool is_baton_image(const std::string& image) { return image.rfind("baton:", 0) == 0; }

// Compose's "NAME:/path[:ro]" volume entry as {NAME, /path}.
std::pair<std::string, std::string> compose_volume(const std::string& entry) {
  const auto first = entry.find(':');
  const auto second = entry.find(':', first + 1);
  return {entry.substr(0, first), entry.substr(first + 1, second == std::string::npos ? second : second - first - 1)};
}

// A Kubernetes container port: a number, or the name of one of its ports.
int resolve_port(const YAML::Node& container, const YAML::Node& port) {
  if (!port) return -1;
  const auto text = port.as<std::string>();
  for (const auto& declared : container["ports"]) {
    if (declared["name"] && declared["name"].as<std::string>() == text) {
      return declared["containerPort"].as<int>();
    }
  }
  try {
    return std::stoi(text);
  } catch (const std::exception&) {
    return -1;
  }
}

TEST_F(Manifests, DockerfileDeclaresTheImageTheExamplesRelyOn) {
  EXPECT_EQ(image->args["BUILD_IMAGE"], "debian:bookworm");
  EXPECT_EQ(image->args["BASE_IMAGE"], "debian:bookworm-slim");
  EXPECT_EQ(image->entrypoint, (std::vector<std::string>{"baton", "run"}));
  EXPECT_EQ(image->healthcheck, (std::vector<std::string>{"baton", "health"}));
  EXPECT_EQ(socket_path(), "/run/baton/baton.sock");
  EXPECT_EQ(image->volumes, (std::vector<std::string>{socket_dir()}));
  EXPECT_EQ(image->exposed_ports, (std::vector<int>{9464}));
  EXPECT_EQ(image->user, "baton:baton");
  EXPECT_NE(image->text.find("--uid 10001"), std::string::npos) << "baton's uid is not 10001";
  EXPECT_NE(image->text.find("-DBATON_BUILD_TESTS=OFF"), std::string::npos);
  for (const auto& [name, value] : image->env) expect_known(name, "Dockerfile ENV");
}

TEST_F(Manifests, BinaryListsTheOptionsTheExamplesUse) {
  // The sources of truth for the other tests: if these fail, the help changed.
  EXPECT_EQ(cli->flags.count("--config"), 1u);
  EXPECT_EQ(cli->flags.count("--http-listen"), 1u);
  EXPECT_EQ(cli->variables.count("BATON_SOCKET_PATH"), 1u);
  EXPECT_EQ(cli->variables.count("BATON_REDIS_PASSWORD"), 1u);
  EXPECT_EQ(cli->variables.count("BATON_HTTP_LISTEN"), 1u);
}

TEST_F(Manifests, EveryManifestParses) {
  const auto compose = load_documents(source_dir + "/docker/compose.yaml");
  ASSERT_EQ(compose.size(), 1u);
  EXPECT_TRUE(compose[0]["services"].IsMap());
  const auto files = kubernetes_files();
  ASSERT_FALSE(files.empty());
  for (const auto& file : files) {
    SCOPED_TRACE(file);
    std::vector<YAML::Node> docs;
    ASSERT_NO_THROW(docs = load_documents(file));
    ASSERT_FALSE(docs.empty());
    for (const auto& doc : docs) {
      EXPECT_TRUE(doc["apiVersion"].IsScalar());
      EXPECT_TRUE(doc["kind"].IsScalar());
      EXPECT_TRUE(doc["metadata"]["name"].IsScalar());
    }
  }
}

TEST_F(Manifests, ComposeSidecarsMatchTheImage) {
  const YAML::Node compose = resolve_merge_keys(load_documents(source_dir + "/docker/compose.yaml")[0]);
  const YAML::Node services = compose["services"];
  std::map<std::string, std::string> sidecar_volume;  // volume -> baton service
  std::vector<std::string> apps;
  for (const auto& entry : services) {
    const auto name = entry.first.as<std::string>();
    const YAML::Node service = entry.second;
    const auto image_name = service["image"] ? service["image"].as<std::string>() : "";
    if (!is_baton_image(image_name)) {
      for (const auto& volume : service["volumes"]) {
        if (compose_volume(volume.as<std::string>()).second == socket_dir()) apps.push_back(name);
      }
      continue;
    }
    SCOPED_TRACE(name);
    EXPECT_EQ(service["build"]["dockerfile"].as<std::string>(), "Dockerfile");
    const YAML::Node env = service["environment"];
    ASSERT_TRUE(env.IsMap());
    std::map<std::string, std::string> literal_env;
    for (const auto& variable : env) {
      literal_env[variable.first.as<std::string>()] = variable.second.as<std::string>();
      expect_known(variable.first.as<std::string>(), name + " environment");
    }
    EXPECT_EQ(literal_env["BATON_SOCKET_PATH"], socket_path());
    EXPECT_EQ(port_of(literal_env["BATON_HTTP_LISTEN"]), http_port());
    for (const auto& published : service["ports"]) {
      EXPECT_EQ(port_of(published.as<std::string>()), http_port()) << "container side of the port";
    }
    EXPECT_EQ(as_strings(service["healthcheck"]["test"]),
              (std::vector<std::string>{"CMD", "baton", "health"}));
    const auto command = as_strings(service["command"]);
    expect_flags_known(command, name + " command");
    const auto host = redis_host(literal_env["BATON_REDIS_URL"]);
    EXPECT_TRUE(services[host].IsMap()) << "redis URL host " << host << " is not a service";

    bool mounts_socket = false;
    for (const auto& volume : service["volumes"]) {
      const auto [source, target] = compose_volume(volume.as<std::string>());
      if (target == socket_dir()) {
        mounts_socket = true;
        EXPECT_TRUE(compose["volumes"][source]) << source << " is not a named volume";
        EXPECT_EQ(sidecar_volume.count(source), 0u) << "two sidecars share volume " << source;
        sidecar_volume[source] = name;
      }
    }
    EXPECT_TRUE(mounts_socket) << "no volume at " << socket_dir();

    const run_result checked = check_config(built_baton, literal_env, command);
    EXPECT_EQ(checked.exit_code, 0) << checked.output;
  }
  EXPECT_GE(sidecar_volume.size(), 2u) << "the demo needs at least two sidecars";

  // Each app shares its socket volume with exactly one sidecar, and each
  // sidecar has an app.
  std::map<std::string, int> apps_per_sidecar;
  for (const auto& app : apps) {
    for (const auto& volume : services[app]["volumes"]) {
      const auto [source, target] = compose_volume(volume.as<std::string>());
      if (target != socket_dir()) continue;
      ASSERT_EQ(sidecar_volume.count(source), 1u) << app << ": no sidecar writes to " << source;
      ++apps_per_sidecar[sidecar_volume[source]];
    }
  }
  for (const auto& [volume, sidecar] : sidecar_volume) {
    EXPECT_EQ(apps_per_sidecar[sidecar], 1) << sidecar << " has no app of its own";
  }
}

TEST_F(Manifests, KubernetesDeploymentMatchesTheImage) {
  const auto objects = kubernetes_objects();
  YAML::Node deployment;
  for (const auto& object : objects) {
    if (object["kind"].as<std::string>() != "Deployment") continue;
    for (const auto& container : object["spec"]["template"]["spec"]["containers"]) {
      if (is_baton_image(container["image"].as<std::string>())) deployment = object;
    }
  }
  ASSERT_TRUE(deployment) << "no Deployment runs the baton image";
  EXPECT_EQ(deployment["spec"]["replicas"].as<int>(), 3);
  const YAML::Node pod = deployment["spec"]["template"]["spec"];

  // The socket directory: one emptyDir, mounted at the image's volume path by
  // every container of the pod (the sidecar and the app).
  std::string socket_volume;
  for (const auto& volume : pod["volumes"]) {
    if (volume["emptyDir"]) socket_volume = volume["name"].as<std::string>();
  }
  ASSERT_FALSE(socket_volume.empty()) << "no emptyDir volume";
  ASSERT_GE(pod["containers"].size(), 2u) << "an app and a baton sidecar";

  YAML::Node baton;
  for (const auto& container : pod["containers"]) {
    const auto name = container["name"].as<std::string>();
    SCOPED_TRACE(name);
    bool mounted = false;
    for (const auto& mount : container["volumeMounts"]) {
      if (mount["name"].as<std::string>() == socket_volume) {
        mounted = true;
        EXPECT_EQ(mount["mountPath"].as<std::string>(), socket_dir());
      }
    }
    EXPECT_TRUE(mounted) << "the socket volume is not mounted";
    for (const auto& variable : container["env"]) {
      expect_known(variable["name"].as<std::string>(), name + " env");
      if (variable["name"].as<std::string>() == "BATON_SOCKET_PATH") {
        EXPECT_EQ(variable["value"].as<std::string>(), socket_path());
      }
    }
    if (is_baton_image(container["image"].as<std::string>())) baton = YAML::Node(container);
  }
  ASSERT_TRUE(baton);

  // The sidecar's settings: literal env values, plus stand-ins for the ones
  // Kubernetes fills in (the password is optional for check-config).
  std::map<std::string, std::string> env;
  bool password_from_secret = false;
  for (const auto& variable : baton["env"]) {
    const auto name = variable["name"].as<std::string>();
    if (variable["value"]) {
      env[name] = variable["value"].as<std::string>();
    } else if (variable["valueFrom"]["fieldRef"]) {
      env[name] = "baton-demo-0";
    } else if (const auto secret = variable["valueFrom"]["secretKeyRef"]) {
      const YAML::Node object = find_object(objects, "Secret", secret["name"].as<std::string>());
      ASSERT_TRUE(object) << name << ": no Secret " << secret["name"];
      const auto key = secret["key"].as<std::string>();
      EXPECT_TRUE(object["stringData"][key] || object["data"][key]) << "Secret lacks key " << key;
      password_from_secret |= name == "BATON_REDIS_PASSWORD";
    }
  }
  EXPECT_TRUE(password_from_secret) << "BATON_REDIS_PASSWORD does not come from a Secret";
  auto args = as_strings(baton["args"]);
  expect_flags_known(args, "baton args");
  EXPECT_FALSE(baton["command"]) << "the image's ENTRYPOINT (baton run) must stay";

  // Socket path and HTTP address, from the environment or a flag.
  std::string socket = env.count("BATON_SOCKET_PATH") ? env["BATON_SOCKET_PATH"] : "";
  std::string listen = env.count("BATON_HTTP_LISTEN") ? env["BATON_HTTP_LISTEN"] : "";
  for (std::size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == "--socket") socket = args[i + 1];
    if (args[i] == "--http-listen") listen = args[i + 1];
  }
  EXPECT_EQ(socket, socket_path());
  EXPECT_EQ(port_of(listen), http_port());
  EXPECT_EQ(resolve_port(baton, baton["livenessProbe"]["httpGet"]["port"]), http_port());
  // Liveness on the route the store plays no part in (a Redis outage must
  // not restart every pod); readiness on /readyz, which standbys pass too, so
  // a rolling update is never left waiting for them (not /leader).
  EXPECT_EQ(baton["livenessProbe"]["httpGet"]["path"].as<std::string>(), "/livez");
  EXPECT_EQ(resolve_port(baton, baton["readinessProbe"]["httpGet"]["port"]), http_port());
  EXPECT_EQ(baton["readinessProbe"]["httpGet"]["path"].as<std::string>(), "/readyz");
  // A rolling update that keeps every pod until its successor is Ready.
  EXPECT_EQ(deployment["spec"]["strategy"]["type"].as<std::string>(), "RollingUpdate");
  EXPECT_EQ(deployment["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"].as<int>(), 0);
  // The app's stop must not wait out the grace period: the worker handles
  // SIGTERM (a container's first process has no default action for it).
  const YAML::Node worker = find_object(objects, "ConfigMap", "baton-demo-worker");
  ASSERT_TRUE(worker);
  EXPECT_NE(worker["data"]["worker.py"].as<std::string>().find("signal.SIGTERM"),
            std::string::npos);

  // The config file: a ConfigMap mounted where --config points, which
  // passes check-config and names the Redis Service.
  const auto config_flag = std::find(args.begin(), args.end(), "--config");
  ASSERT_NE(config_flag, args.end());
  ASSERT_NE(config_flag + 1, args.end());
  const fs::path config_path = *(config_flag + 1);
  std::string config_map;
  for (const auto& mount : baton["volumeMounts"]) {
    if (mount["mountPath"].as<std::string>() != config_path.parent_path().string()) continue;
    for (const auto& volume : pod["volumes"]) {
      if (volume["name"].as<std::string>() == mount["name"].as<std::string>() && volume["configMap"]) {
        config_map = volume["configMap"]["name"].as<std::string>();
      }
    }
  }
  ASSERT_FALSE(config_map.empty()) << "no ConfigMap mounted at " << config_path.parent_path();
  const YAML::Node map_object = find_object(objects, "ConfigMap", config_map);
  ASSERT_TRUE(map_object) << "no ConfigMap " << config_map;
  const YAML::Node file = map_object["data"][config_path.filename().string()];
  ASSERT_TRUE(file) << config_map << " has no " << config_path.filename();

  const fs::path scratch = fs::temp_directory_path() / ("baton-manifests-" + std::to_string(getpid()));
  fs::create_directories(scratch);
  { std::ofstream(scratch / "baton.yaml") << file.as<std::string>(); }
  *(config_flag + 1) = (scratch / "baton.yaml").string();
  const run_result checked = check_config(built_baton, env, args);
  fs::remove_all(scratch);
  EXPECT_EQ(checked.exit_code, 0) << checked.output;

  const auto url = YAML::Load(file.as<std::string>())["redis"]["url"].as<std::string>();
  const YAML::Node service = find_object(objects, "Service", redis_host(url));
  ASSERT_TRUE(service) << "redis.url " << url << " names no Service";
  bool port_matches = false;
  for (const auto& port : service["spec"]["ports"]) port_matches |= port["port"].as<int>() == redis_port(url);
  EXPECT_TRUE(port_matches) << "Service " << redis_host(url) << " has no port " << redis_port(url);
  // The Service selects the Redis pods.
  bool selected = false;
  for (const auto& object : objects) {
    if (object["kind"].as<std::string>() != "Deployment") continue;
    const YAML::Node labels = object["spec"]["template"]["metadata"]["labels"];
    bool all = true;
    for (const auto& wanted : service["spec"]["selector"]) {
      all &= labels[wanted.first.as<std::string>()] &&
             labels[wanted.first.as<std::string>()].as<std::string>() == wanted.second.as<std::string>();
    }
    for (const auto& container : object["spec"]["template"]["spec"]["containers"]) {
      selected |= all && container["image"].as<std::string>().rfind("redis:", 0) == 0;
    }
  }
  EXPECT_TRUE(selected) << "Service " << redis_host(url) << " selects no Redis pods";

  // Redis gets the Secret's password on its standard input, never in its
  // argv (where `ps` on the node shows it): no $(REDIS_PASSWORD) argument.
  for (const auto& object : objects) {
    if (object["kind"].as<std::string>() != "Deployment") continue;
    for (const auto& container : object["spec"]["template"]["spec"]["containers"]) {
      for (const char* key : {"command", "args"}) {
        for (const auto& word : as_strings(container[key])) {
          EXPECT_EQ(word.find("$(REDIS_PASSWORD)"), std::string::npos) << word;
        }
      }
    }
  }
}

}  // namespace
}  // namespace baton::deploy
