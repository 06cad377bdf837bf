// The replicated store kinds' options: store.kind sentinel (sentinel.*) and
// cluster (cluster.nodes), and redis.replica_ack / redis.replica_ack_timeout.
// The URL lists come as a YAML list or comma-separated from a flag or a
// variable and end up one URL per entry; each list must be TCP URLs of one
// scheme without a password (and, for a cluster, without a db); replica_ack
// is off, all or 1..64 and only for the kinds that write to one master; its
// timeout defaults to half the command timeout and must stay below it; the
// redis.tls_* options need rediss:// sentinels or nodes. Every refusal is one
// config_error naming the option. parse_replica_ack is tested directly too.
#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "baton/command_line.hpp"
#include "baton/config_load.hpp"
#include "baton/redis_settings.hpp"
#include "config_test_util.hpp"
#include "redlock/redlock_settings.hpp"

namespace baton {
namespace {

using namespace config_test_util;
using namespace std::chrono_literals;
using strings = std::vector<std::string>;

// The config_error `load` throws; checks that it names `option` and is one line.
std::string replicated_error_of(const std::function<void()>& load, const std::string& option) {
  try {
    load();
  } catch (const config_error& e) {
    EXPECT_EQ(e.option(), option) << e.what();
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    return message;
  }
  ADD_FAILURE() << "no config_error, expected one naming " << option;
  return {};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A sentinel config in YAML with `addresses` (a YAML flow list's inside) and
// `extra` lines appended.
std::string sentinel_yaml(const std::string& addresses, const std::string& extra = "") {
  return "store: {kind: sentinel}\nsentinel:\n  addresses: [" + addresses +
         "]\n  master_name: mymaster\n" + extra;
}

std::string cluster_yaml(const std::string& nodes, const std::string& extra = "") {
  return "store: {kind: cluster}\ncluster:\n  nodes: [" + nodes + "]\n" + extra;
}

const strings three_sentinels{"redis://s1:26379", "redis://s2:26379", "redis://s3:26379"};

// --- sentinel ----------------------------------------------------------------

TEST(replicated_config, a_sentinel_config_from_yaml_is_accepted_with_one_url_per_entry) {
  const auto cfg = from_yaml(
      "store: {kind: sentinel}\nsentinel:\n  addresses:\n    - redis://s1:26379\n"
      "    - redis://s2:26379, redis://s3:26379\n  master_name: mymaster\n");
  EXPECT_EQ(cfg.store.kind, "sentinel");
  EXPECT_EQ(sentinel_settings_of(cfg).addresses, three_sentinels);
  EXPECT_EQ(sentinel_settings_of(cfg).master_name, "mymaster");
  EXPECT_EQ(redis_urls_in_use(cfg), three_sentinels);
}

TEST(replicated_config, a_list_option_in_yaml_may_be_one_string_separated_by_commas) {
  // As the variable and the flag take it, and as the option's help says.
  const auto cfg = from_yaml(
      "store: {kind: sentinel}\nsentinel:\n"
      "  addresses: redis://s1:26379, redis://s2:26379,redis://s3:26379\n"
      "  master_name: mymaster\n");
  EXPECT_EQ(sentinel_settings_of(cfg).addresses, three_sentinels);
}

TEST(replicated_config, a_list_option_given_a_map_in_yaml_names_addresses_not_a_program) {
  try {
    from_yaml("store: {kind: sentinel}\nsentinel:\n  addresses: {a: b}\n  master_name: m\n");
    FAIL() << "a map was taken as a list of addresses";
  } catch (const std::exception& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("list of addresses"), std::string::npos) << what;
    EXPECT_EQ(what.find("program"), std::string::npos) << what;
  }
}

TEST(replicated_config, sentinel_addresses_from_a_flag_or_a_variable_are_split_at_commas) {
  const auto inv = parse({"run", "--election", "e", "--store-kind", "sentinel",
                          "--sentinel-addresses", "redis://s1:26379,redis://s2:26379, redis://s3:26379",
                          "--sentinel-master-name", "mymaster", "--", "true"});
  ASSERT_EQ(inv.what, invocation::verb::run) << inv.message;
  EXPECT_EQ(sentinel_settings_of(inv.cfg).addresses, three_sentinels);
  EXPECT_EQ(sentinel_settings_of(inv.cfg).master_name, "mymaster");

  const auto env = from_yaml("", {{"BATON_STORE_KIND", "sentinel"},
                                  {"BATON_SENTINEL_ADDRESSES",
                                   "redis://s1:26379 , redis://s2:26379,redis://s3:26379"},
                                  {"BATON_SENTINEL_MASTER_NAME", "mymaster"}});
  EXPECT_EQ(sentinel_settings_of(env).addresses, three_sentinels);
  EXPECT_EQ(sentinel_settings_of(env).master_name, "mymaster");
}

TEST(replicated_config, check_config_shows_the_sentinel_section_and_reads_it_back) {
  const auto inv = parse({"check-config", "--election", "e", "--store-kind", "sentinel",
                          "--sentinel-addresses", "redis://s1:26379,redis://s2:26379",
                          "--sentinel-master-name", "mymaster"});
  ASSERT_EQ(inv.what, invocation::verb::check_config) << inv.message;
  const std::string yaml = describe_config(inv.cfg);
  EXPECT_TRUE(contains(yaml, "\"redis://s1:26379\",\"redis://s2:26379\"")) << yaml;
  const auto back = from_yaml(yaml);
  EXPECT_EQ(sentinel_settings_of(back).addresses, sentinel_settings_of(inv.cfg).addresses);
  EXPECT_EQ(sentinel_settings_of(back).master_name, "mymaster");
  EXPECT_EQ(back.store.kind, "sentinel");
}

TEST(replicated_config, the_sentinel_section_is_ignored_by_the_other_kinds) {
  const auto cfg = from_yaml("sentinel:\n  addresses: [unix:///nowhere]\n");
  EXPECT_EQ(cfg.store.kind, "redis");
  EXPECT_EQ(redis_urls_in_use(cfg), strings{redis_settings_of(cfg).url});
}

TEST(replicated_config, missing_sentinel_addresses_are_an_error_naming_the_option) {
  EXPECT_EQ(replicated_error_of(
                [] { from_yaml("store: {kind: sentinel}\nsentinel: {master_name: m}\n"); },
                "sentinel.addresses"),
            "sentinel.addresses is required for store.kind sentinel: give at least one URL");
  // Only commas and blanks is no address either.
  EXPECT_TRUE(contains(replicated_error_of(
                           [] {
                             from_yaml("", {{"BATON_STORE_KIND", "sentinel"},
                                            {"BATON_SENTINEL_ADDRESSES", " , ,"},
                                            {"BATON_SENTINEL_MASTER_NAME", "m"}});
                           },
                           "sentinel.addresses"),
                       "sentinel.addresses is required for store.kind sentinel"));
}

TEST(replicated_config, a_missing_master_name_is_an_error_naming_the_option) {
  EXPECT_EQ(replicated_error_of(
                [] { from_yaml("store: {kind: sentinel}\nsentinel: {addresses: [redis://s1]}\n"); },
                "sentinel.master_name"),
            "sentinel.master_name is required for store.kind sentinel: the name the sentinels "
            "monitor the master under");
  const auto spaced = replicated_error_of(
      [] {
        from_yaml(
            "store: {kind: sentinel}\nsentinel: {addresses: [redis://s1], master_name: \"my "
            "master\"}\n");
      },
      "sentinel.master_name");
  EXPECT_TRUE(contains(spaced, "must hold no spaces or control characters")) << spaced;
}

TEST(replicated_config, a_password_in_a_sentinel_url_is_refused_and_not_shown) {
  const auto why = replicated_error_of(
      [] { from_yaml(sentinel_yaml("redis://s1:26379, \"redis://:hunter2@s2:26379\"")); },
      "sentinel.addresses");
  EXPECT_TRUE(contains(why, "sentinel.addresses: entry 2 (redis://:***@s2:26379) carries a "
                            "password: use sentinel.password_file, never a URL"))
      << why;
  EXPECT_FALSE(contains(why, "hunter2")) << why;
  EXPECT_TRUE(contains(why, "(from test.yaml)")) << why;
}

TEST(replicated_config, a_unix_socket_sentinel_is_refused) {
  const auto why =
      replicated_error_of([] { from_yaml(sentinel_yaml("redis://s1:26379, unix:///run/s.sock")); },
                          "sentinel.addresses");
  EXPECT_TRUE(contains(why, "sentinel.addresses: entry 2 (")) << why;
  EXPECT_TRUE(contains(why, ") must be redis:// or rediss://: the store learns TCP addresses")) << why;
}

TEST(replicated_config, a_bad_sentinel_url_is_named_by_entry) {
  const auto why = replicated_error_of(
      [] { from_yaml(sentinel_yaml("redis://s1:26379, redis://s2:99999")); }, "sentinel.addresses");
  EXPECT_TRUE(contains(why, "sentinel.addresses: entry 2: ")) << why;
  EXPECT_TRUE(contains(why, "99999")) << why;
}

TEST(replicated_config, mixing_redis_and_rediss_sentinels_is_refused) {
  const auto why =
      replicated_error_of([] { from_yaml(sentinel_yaml("redis://s1:26379, rediss://s2:26379")); },
                          "sentinel.addresses");
  EXPECT_TRUE(contains(why, "sentinel.addresses mixes redis:// and rediss://: use one scheme for all"))
      << why;
}

TEST(replicated_config, sentinel_files_must_exist) {
  const temp_dir dir;
  const auto password = dir.write("sentinel-password", "s3cret\n");
  EXPECT_NO_THROW(from_yaml(sentinel_yaml("redis://s1:26379", "  password_file: " + password + "\n")));
  const auto why = replicated_error_of(
      [&] {
        from_yaml(sentinel_yaml("redis://s1:26379", "  password_file: " + dir.path("none") + "\n"));
      },
      "sentinel.password_file");
  EXPECT_TRUE(contains(why, "the path does not exist")) << why;
  const auto ca = replicated_error_of(
      [&] {
        from_yaml(
            sentinel_yaml("rediss://s1:26379", "  tls_ca_file: " + dir.path("ca.pem") + "\n"));
      },
      "sentinel.tls_ca_file");
  EXPECT_TRUE(contains(ca, "the path does not exist")) << ca;
}

// --- cluster -----------------------------------------------------------------

TEST(replicated_config, a_cluster_config_is_accepted_from_yaml_and_a_variable) {
  const strings nodes{"redis://n1:7000", "redis://n2:7001"};
  EXPECT_EQ(cluster_settings_of(from_yaml(cluster_yaml("redis://n1:7000, redis://n2:7001"))).nodes,
            nodes);
  const auto env = from_yaml("", {{"BATON_STORE_KIND", "cluster"},
                                  {"BATON_CLUSTER_NODES", "redis://n1:7000,redis://n2:7001"}});
  EXPECT_EQ(cluster_settings_of(env).nodes, nodes);
  EXPECT_EQ(redis_urls_in_use(env), nodes);
  // db 0 written out is still db 0.
  EXPECT_NO_THROW(from_yaml(cluster_yaml("redis://n1:7000/0")));
}

TEST(replicated_config, cluster_nodes_are_required_for_a_cluster) {
  EXPECT_EQ(replicated_error_of([] { from_yaml("store: {kind: cluster}\n"); }, "cluster.nodes"),
            "cluster.nodes is required for store.kind cluster: give at least one URL");
}

TEST(replicated_config, a_cluster_node_naming_a_db_is_refused) {
  const auto why = replicated_error_of(
      [] { from_yaml(cluster_yaml("redis://n1:7000, redis://n2:7001/3")); }, "cluster.nodes");
  EXPECT_TRUE(contains(why, "cluster.nodes: entry 2 (redis://n2:7001/3) names a db: a Redis "
                            "Cluster has only db 0"))
      << why;
}

TEST(replicated_config, a_password_in_a_cluster_url_points_at_the_redis_password_options) {
  const auto why = replicated_error_of([] { from_yaml(cluster_yaml("\"redis://u:pw@n1:7000\"")); },
                                       "cluster.nodes");
  EXPECT_TRUE(contains(why, "cluster.nodes: entry 1 (redis://u:***@n1:7000) carries a password: "
                            "use redis.password_file or BATON_REDIS_PASSWORD, never a URL"))
      << why;
}

TEST(replicated_config, cluster_nodes_must_be_tcp_and_of_one_scheme) {
  EXPECT_TRUE(contains(
      replicated_error_of([] { from_yaml(cluster_yaml("unix:///run/r.sock")); }, "cluster.nodes"),
      "must be redis:// or rediss://"));
  EXPECT_TRUE(contains(
      replicated_error_of([] { from_yaml(cluster_yaml("rediss://n1:7000, redis://n2:7001")); },
                          "cluster.nodes"),
      "cluster.nodes mixes redis:// and rediss://: use one scheme for all"));
}

// The URL lists are split where the option table reads them, from every
// source: the loaded config holds one URL per element before any rule or
// store reads it.
TEST(replicated_config, url_lists_are_split_where_they_are_read) {
  config_loader loader(fake_env({{"BATON_CLUSTER_NODES", "redis://n1:7000, redis://n2:7000"}}));
  loader.load_yaml(
      "sentinel: {addresses: [\"redis://s1:26379,redis://s2:26379\", redis://s3:26379]}\n",
      "test.yaml");
  loader.load_environment();
  loader.set("redlock.masters", "redis://a:1,redis://b:1 redis://c:1", "--redlock-masters");
  EXPECT_EQ(sentinel_settings_of(loader.current()).addresses, three_sentinels);
  EXPECT_EQ(cluster_settings_of(loader.current()).nodes,
            (strings{"redis://n1:7000", "redis://n2:7000"}));
  EXPECT_EQ(redlock_settings_of(loader.current()).masters,
            (strings{"redis://a:1", "redis://b:1", "redis://c:1"}));
}

// --- redis.replica_ack ---------------------------------------------------------

TEST(replicated_config, replica_ack_accepts_off_all_and_one_to_sixty_four) {
  EXPECT_EQ(redis_settings_of(from_yaml("")).replica_ack.text(), "off");
  for (const char* value : {"off", "all", "1", "64"}) {
    EXPECT_EQ(
        redis_settings_of(from_yaml("", {{"BATON_REDIS_REPLICA_ACK", value}})).replica_ack.text(),
        value)
        << value;
    EXPECT_EQ(redis_settings_of(from_yaml(sentinel_yaml("redis://s1:26379"),
                                          {{"BATON_REDIS_REPLICA_ACK", value}}))
                  .replica_ack.text(),
              value)
        << value;
    EXPECT_EQ(redis_settings_of(
                  from_yaml(cluster_yaml("redis://n1:7000"), {{"BATON_REDIS_REPLICA_ACK", value}}))
                  .replica_ack.text(),
              value)
        << value;
  }
  // YAML's own scalars: a plain number and off (not a YAML 1.1 boolean here).
  EXPECT_EQ(redis_settings_of(from_yaml("redis: {replica_ack: all}")).replica_ack.text(), "all");
  EXPECT_EQ(redis_settings_of(from_yaml("redis: {replica_ack: 3}")).replica_ack.text(), "3");
  EXPECT_EQ(redis_settings_of(from_yaml("redis: {replica_ack: off}")).replica_ack.text(), "off");
  const auto inv = parse({"run", "--election", "e", "--redis-replica-ack", "2", "--", "true"});
  ASSERT_EQ(inv.what, invocation::verb::run) << inv.message;
  EXPECT_EQ(redis_settings_of(inv.cfg).replica_ack.text(), "2");
}

// redis.replica_ack becomes its type where the option table reads it: the
// config holds the number the stores take (nothing downstream parses text
// again), from the file, a variable or a flag alike, the last source
// winning; a bad value is refused as it is read, naming the option and the
// source, before any other rule runs.
TEST(replicated_config, replica_ack_is_parsed_once_where_it_is_read) {
  EXPECT_EQ(redis_settings_of(from_yaml("")).replica_ack, replica_ack_setting::off());
  EXPECT_EQ(redis_settings_of(from_yaml("redis: {replica_ack: all}")).replica_ack,
            replica_ack_setting::all());
  EXPECT_EQ(
      redis_settings_of(from_yaml("redis: {replica_ack: all}", {{"BATON_REDIS_REPLICA_ACK", "3"}}))
          .replica_ack,
      replica_ack_setting::at_least(3));
  const auto inv = parse({"run", "--election", "e", "--redis-replica-ack", "2", "--", "true"},
                         {{"BATON_REDIS_REPLICA_ACK", "all"}});
  ASSERT_EQ(inv.what, invocation::verb::run) << inv.message;
  EXPECT_EQ(redis_settings_of(inv.cfg).replica_ack.replicas, 2);
  EXPECT_TRUE(redis_settings_of(inv.cfg).replica_ack.on());

  config_loader loader(fake_env({}));
  const auto why = replicated_error_of(
      [&] { loader.load_yaml("redis: {replica_ack: lots}\n", "test.yaml"); }, "redis.replica_ack");
  EXPECT_EQ(why, "redis.replica_ack: lots is not allowed: must be off, all, or a number of replicas "
                 "from 1 to 64 (from test.yaml)");
}

TEST(replicated_config, replica_ack_refuses_zero_too_many_words_and_negatives) {
  for (const char* value : {"0", "65", "abc", "-1", "", "1.5", "ALL"}) {
    const auto why = replicated_error_of(
        [&] {
          from_yaml("", {{"BATON_REDIS_REPLICA_ACK", value}});
        },
        "redis.replica_ack");
    EXPECT_TRUE(contains(why, "redis.replica_ack: ")) << why;
    EXPECT_TRUE(contains(why, " is not allowed: must be off, all, or a number of replicas from 1 to 64 "
                              "(from BATON_REDIS_REPLICA_ACK)"))
        << why;
  }
  EXPECT_EQ(
      replicated_error_of(
          [] {
            from_yaml("", {{"BATON_REDIS_REPLICA_ACK", "65"}});
          },
          "redis.replica_ack"),
      "redis.replica_ack: 65 is not allowed: must be off, all, or a number of replicas from 1 "
      "to 64 (from BATON_REDIS_REPLICA_ACK)");
  const auto inv = parse({"run", "--election", "e", "--redis-replica-ack", "0", "--", "true"});
  EXPECT_EQ(inv.what, invocation::verb::exit_now);
  EXPECT_EQ(inv.exit_code, 2);
  EXPECT_EQ(inv.message, "baton: redis.replica_ack: 0 is not allowed: must be off, all, or a number "
                         "of replicas from 1 to 64 (from --redis-replica-ack)");
}

TEST(replicated_config, replica_ack_is_refused_for_redlock_and_postgres) {
  const auto redlock = replicated_error_of(
      [] {
        from_yaml("store: {kind: redlock}\nredlock: {masters: [redis://a:1, redis://b:1, redis://c:1]}\n"
                  "redis: {replica_ack: \"1\"}\n");
      },
      "redis.replica_ack");
  EXPECT_EQ(redlock,
            "redis.replica_ack applies to store.kind redis, sentinel and cluster, not redlock "
            "(from test.yaml)");
  const auto postgres =
      replicated_error_of([] { from_yaml("store: {kind: postgres}\nredis: {replica_ack: all}\n"); },
                          "redis.replica_ack");
  EXPECT_EQ(postgres,
            "redis.replica_ack applies to store.kind redis, sentinel and cluster, not postgres "
            "(from test.yaml)");
  // Left off, the other kinds do not care.
  EXPECT_NO_THROW(from_yaml("store: {kind: redlock}\nredlock: {masters: [redis://a:1, redis://b:1, "
                            "redis://c:1]}\nredis: {replica_ack: \"off\"}\n"));
}

TEST(replicated_config, replica_ack_timeout_defaults_to_half_the_command_timeout) {
  const auto cfg = from_yaml("redis: {command_timeout: 800ms, replica_ack: \"1\"}\n");
  EXPECT_EQ(redis_settings_of(cfg).command_timeout, 800ms);
  EXPECT_EQ(redis_settings_of(cfg).replica_ack_timeout, 400ms);
  // From the derived command timeout too: ttl 3s -> renew 1s -> command 500ms.
  const auto derived = from_yaml("lease: {ttl: 3s}\n");
  EXPECT_EQ(redis_settings_of(derived).command_timeout, 500ms);
  EXPECT_EQ(redis_settings_of(derived).replica_ack_timeout, 250ms);
  // Set, it stays.
  EXPECT_EQ(
      redis_settings_of(
          from_yaml(
              "redis: {command_timeout: 800ms, replica_ack: all, replica_ack_timeout: 700ms}\n"))
          .replica_ack_timeout,
      700ms);
}

TEST(replicated_config, replica_ack_timeout_must_be_shorter_than_the_command_timeout) {
  const auto equal = replicated_error_of(
      [] {
        from_yaml(
            "redis: {command_timeout: 800ms, replica_ack: all, replica_ack_timeout: 800ms}\n");
      },
      "redis.replica_ack_timeout");
  EXPECT_TRUE(contains(equal, "redis.replica_ack_timeout: 800ms is not allowed: must be shorter than "
                              "redis.command_timeout (800ms): WAIT runs inside it"))
      << equal;
  const auto longer = replicated_error_of(
      [] {
        from_yaml("", {{"BATON_REDIS_COMMAND_TIMEOUT", "500ms"},
                       {"BATON_REDIS_REPLICA_ACK", "2"},
                       {"BATON_REDIS_REPLICA_ACK_TIMEOUT", "2s"}});
      },
      "redis.replica_ack_timeout");
  EXPECT_TRUE(contains(longer, "must be shorter than redis.command_timeout (500ms)")) << longer;
  EXPECT_TRUE(contains(longer, "(from BATON_REDIS_REPLICA_ACK_TIMEOUT)")) << longer;
  // With replica_ack off no WAIT is sent, so the timeout is not held to it.
  EXPECT_NO_THROW(from_yaml("redis: {command_timeout: 800ms, replica_ack_timeout: 2s}\n"));
}

TEST(replicated_config, parse_replica_ack_gives_minus_one_for_off_zero_for_all_and_the_number) {
  EXPECT_EQ(parse_replica_ack("off"), -1);
  EXPECT_EQ(parse_replica_ack("all"), 0);
  EXPECT_EQ(parse_replica_ack("1"), 1);
  EXPECT_EQ(parse_replica_ack("7"), 7);
  EXPECT_EQ(parse_replica_ack("64"), 64);
  for (const char* bad : {"0", "65", "-1", "abc", "", " 1", "1 ", "+1", "1x", "0x10", "Off", "ALL",
                          "99999999999999999999"}) {
    EXPECT_EQ(parse_replica_ack(bad), std::nullopt) << '"' << bad << '"';
  }
}

// --- redis.tls_* with the replicated kinds -----------------------------------------

TEST(replicated_config, redis_tls_options_are_accepted_with_rediss_sentinels) {
  const temp_dir dir;
  const auto ca = dir.write("ca.pem", "not read by validation\n");
  const auto cfg = from_yaml(sentinel_yaml("rediss://s1:26379, rediss://s2:26379",
                                           "redis:\n  tls_ca_file: " + ca +
                                               "\n  tls_verify: ca\n  tls_server_name: redis.internal\n"));
  EXPECT_EQ(redis_settings_of(cfg).tls_ca_file, ca);
  for (const auto& url : redis_urls_in_use(cfg)) {
    const auto e = redis_endpoint_for(redis_settings_of(cfg), url);
    EXPECT_TRUE(e.tls) << url;
    EXPECT_EQ(e.tls_settings.ca_file, ca);
    EXPECT_EQ(e.tls_settings.verify, tls_verify::ca);
  }
  EXPECT_NO_THROW(from_yaml(cluster_yaml("rediss://n1:7000", "redis: {tls_verify: none}\n")));
}

TEST(replicated_config, redis_tls_options_with_plain_sentinels_are_refused) {
  const temp_dir dir;
  const auto ca = dir.write("ca.pem", "not read by validation\n");
  EXPECT_EQ(
      replicated_error_of(
          [&] {
            from_yaml(sentinel_yaml("redis://s1:26379", "redis:\n  tls_ca_file: " + ca + "\n"));
          },
          "redis.tls_ca_file"),
      "redis.tls_ca_file is set but sentinel.addresses are not a rediss:// URL: TLS settings "
      "apply only to rediss:// (write rediss:// to use TLS) (from test.yaml)");
  const auto verify = replicated_error_of(
      [] { from_yaml(sentinel_yaml("redis://s1:26379", "redis: {tls_verify: none}\n")); },
      "redis.tls_verify");
  EXPECT_TRUE(contains(verify, "sentinel.addresses are not a rediss:// URL")) << verify;
  const auto cluster = replicated_error_of(
      [] { from_yaml(cluster_yaml("redis://n1:7000", "redis: {tls_server_name: n.internal}\n")); },
      "redis.tls_server_name");
  EXPECT_TRUE(contains(cluster, "cluster.nodes are not a rediss:// URL")) << cluster;
}

// --- cases that once failed: each guards a fix ---

// A command timeout of 1ms derives a replica_ack_timeout of 0 (1ms / 2), and
// that refuses the config although replica_ack is off and the user never set
// the timeout; before replica_ack existed this config was accepted.
TEST(replicated_config, a_tiny_command_timeout_with_replica_ack_off_is_still_accepted) {
  EXPECT_NO_THROW(from_yaml("redis: {command_timeout: 1ms}\n"));
}

// redis.tls_cert_file without redis.tls_key_file is refused; the sentinels'
// pair is not, and master_locators.cpp then gives the sentinels the
// certificate with an empty key file, so every connection to them fails.
TEST(replicated_config, a_sentinel_certificate_without_its_key_is_refused) {
  const temp_dir dir;
  const auto cert = dir.write("cert.pem", "not read by validation\n");
  const auto why = replicated_error_of(
      [&] { from_yaml(sentinel_yaml("rediss://s1:26379", "  tls_cert_file: " + cert + "\n")); },
      "sentinel.tls_key_file");
  EXPECT_TRUE(contains(why, "a client certificate needs both")) << why;
}

// The redis.tls_* options are refused without a rediss:// URL (a forgotten
// "s" would otherwise go unnoticed); the sentinel.tls_* options are not,
// and with redis:// sentinels they have no effect at all.
TEST(replicated_config, sentinel_tls_options_with_plain_sentinels_are_refused) {
  const temp_dir dir;
  const auto ca = dir.write("ca.pem", "not read by validation\n");
  const auto why = replicated_error_of(
      [&] { from_yaml(sentinel_yaml("redis://s1:26379", "  tls_ca_file: " + ca + "\n")); },
      "sentinel.tls_ca_file");
  EXPECT_TRUE(contains(why, "sentinel.addresses are not a rediss:// URL")) << why;
}

}  // namespace
}  // namespace baton
