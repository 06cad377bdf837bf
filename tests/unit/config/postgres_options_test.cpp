// The postgres: options: every source reaches them, libpq judges the URL, the
// table name is one libpq and the channel can carry, the command timeout is
// derived like Redis's, and the password follows the Redis password's rules
// (never a flag, one source only, never shown).
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "baton/command_line.hpp"
#include "baton/config_load.hpp"
#include "config_test_util.hpp"
#include "postgres/postgres_settings.hpp"

namespace baton {
namespace {

using namespace config_test_util;
using namespace std::chrono_literals;

// The postgres options are read only when the postgres store is chosen.
const std::string pg = "store: {kind: postgres}\n";

std::string postgres_error_of(const std::function<void()>& load) {
  try {
    load();
  } catch (const config_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no config_error";
  return {};
}

TEST(postgres_options, the_kind_and_its_section_from_yaml_env_and_flags) {
  const auto cfg = from_yaml(
      "store: {kind: postgres}\n"
      "postgres: {url: \"host=db dbname=app user=baton\", table: ops.leases, create_schema: false,\n"
      "           connect_timeout: 2s, command_timeout: 300ms}\n");
  EXPECT_EQ(cfg.store.kind, "postgres");
  EXPECT_EQ(postgres_settings_of(cfg).url, "host=db dbname=app user=baton");
  EXPECT_EQ(postgres_settings_of(cfg).table, "ops.leases");
  EXPECT_FALSE(postgres_settings_of(cfg).create_schema);
  EXPECT_EQ(postgres_settings_of(cfg).connect_timeout, 2s);
  EXPECT_EQ(postgres_settings_of(cfg).command_timeout, 300ms);
  EXPECT_EQ(postgres_settings_of(from_yaml("", {{"BATON_POSTGRES_TABLE", "t2"}})).table, "t2");
  const auto inv = parse({"run", "--election", "e", "--store-kind", "postgres", "--postgres-url",
                          "postgresql://baton@db:5433/app", "--postgres-timeout", "250ms"});
  ASSERT_EQ(inv.what, invocation::verb::run) << inv.message;
  EXPECT_EQ(postgres_settings_of(inv.cfg).url, "postgresql://baton@db:5433/app");
  EXPECT_EQ(postgres_settings_of(inv.cfg).command_timeout, 250ms);
}

TEST(postgres_options, the_command_timeout_is_derived_from_the_renew_interval) {
  EXPECT_EQ(postgres_settings_of(from_yaml("lease: {ttl: 900ms}")).command_timeout, 150ms);
  EXPECT_EQ(postgres_settings_of(from_yaml("")).command_timeout, 1000ms);
}

TEST(postgres_options, a_url_libpq_cannot_read_is_one_line_naming_the_option) {
  const auto e = postgres_error_of([] { from_yaml(pg + "postgres: {url: \"host=db port\"}"); });
  EXPECT_EQ(e.rfind("postgres.url: libpq cannot read it: ", 0), 0u) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  const auto u = postgres_error_of(
      [] { from_yaml(pg + "postgres: {url: \"postgresql://db/app?nosuch=1\"}"); });
  EXPECT_NE(u.find("nosuch"), std::string::npos) << u;
}

// libpq reads the port only when it connects ("invalid integer value"),
// so check-config would pass a URL that run cannot use.
TEST(postgres_options, a_port_that_is_not_a_number_is_refused_naming_the_url) {
  for (const char* url : {"postgresql://db:abc/app", "host=db port=5432x", "host=db port=70000",
                          "host=db port=0", "host=a,b port=5432,x", "postgresql://u:pw@db:-1/app"}) {
    const auto e = postgres_error_of([&] { from_yaml(pg + "postgres: {url: \"" + url + "\"}"); });
    EXPECT_EQ(e.rfind("postgres.url: ", 0), 0u) << url << ": " << e;
    EXPECT_NE(e.find("port"), std::string::npos) << e;
    EXPECT_NE(e.find("1 to 65535"), std::string::npos) << e;
    EXPECT_EQ(e.find("pw"), std::string::npos) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
  for (const char* url : {"postgresql://db:5433/app", "host=a,b port=5432,5433", "host=a,b port=,5433",
                          "host=db", "postgresql:///app"}) {
    EXPECT_EQ(postgres_settings_of(from_yaml(pg + "postgres: {url: \"" + url + "\"}")).url, url);
  }
}

// An empty variable clears the file's value (the way to undo it), but an
// empty BATON_POSTGRES_PASSWORD_FILE left by a template would drop the
// file's password file without a word: it is warned about.
TEST(postgres_options, an_empty_password_file_variable_warns_that_it_clears_the_file) {
  const temp_dir dir;
  const auto file = dir.write("pw", "from-file\n");
  const auto yaml = pg + "postgres: {password_file: " + file + "}";
  const auto warnings = [&](std::map<std::string, std::string> env) {
    config_loader loader(fake_env(std::move(env)));
    loader.load_yaml(yaml, "test.yaml");
    loader.load_environment();
    EXPECT_EQ(postgres_settings_of(loader.current()).password_file.empty(),
              loader.warnings().size() == 1);
    return loader.warnings();
  };
  const auto w = warnings({{"BATON_POSTGRES_PASSWORD_FILE", ""}});
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0],
            "BATON_POSTGRES_PASSWORD_FILE is set but empty: it clears postgres.password_file, which "
            "the file set (from test.yaml); unset the variable to keep the file's value");
  EXPECT_TRUE(warnings({}).empty());
  EXPECT_TRUE(warnings({{"BATON_POSTGRES_PASSWORD_FILE", file}}).empty());
  EXPECT_TRUE(warnings({{"BATON_POSTGRES_TABLE", ""}}).empty()) << "the file did not set it";

  // Through the command line, as main prints them.
  const auto config_file = dir.write("c.yaml", "election: e\n" + yaml + "\n");
  const auto inv = parse({"check-config", "--config", config_file},
                         {{"BATON_POSTGRES_PASSWORD_FILE", ""}, {"BATON_POSTGRES_PASSWORD", "x"}});
  ASSERT_EQ(inv.what, invocation::verb::check_config) << inv.message;
  ASSERT_EQ(inv.warnings.size(), 1u);
  EXPECT_NE(inv.warnings[0].find("BATON_POSTGRES_PASSWORD_FILE is set but empty"), std::string::npos);
}

TEST(postgres_options, another_store_kind_does_not_read_the_postgres_url_or_password) {
  // Reading them would open libpq in every Redis daemon (src/libpq/libpq_on_demand.hpp).
  const auto cfg = from_yaml("postgres: {url: \"host=db port\"}", {{"BATON_POSTGRES_PASSWORD", "x"}});
  EXPECT_EQ(cfg.store.kind, "redis");
  EXPECT_EQ(postgres_settings_of(cfg).password, "");
}

TEST(postgres_options, table_names_that_would_need_quoting_are_refused) {
  for (const char* bad : {"", "a.b.c", "1x", "x-y", "a.", "x y"}) {
    const auto e =
        postgres_error_of([bad] { from_yaml(std::string("postgres: {table: \"") + bad + "\"}"); });
    EXPECT_EQ(e.rfind("postgres.table: ", 0), 0u) << e;
  }
  EXPECT_NE(postgres_error_of([] { from_yaml("postgres: {table: " + std::string(64, 'a') + "}"); }),
            "");
  for (const char* good : {"baton_lease", "ops.baton_lease", "_x"}) {
    EXPECT_EQ(postgres_settings_of(from_yaml(std::string("postgres: {table: ") + good + "}")).table,
              good);
  }
}

TEST(postgres_options, the_password_comes_from_the_environment_or_a_file_never_a_flag) {
  EXPECT_EQ(postgres_settings_of(from_yaml(pg, {{"BATON_POSTGRES_PASSWORD", "s3cret"}})).password,
            "s3cret");
  const temp_dir dir;
  const auto file = dir.write("pw", "from-file\n");
  EXPECT_EQ(
      postgres_settings_of(from_yaml(pg + "postgres: {password_file: " + file + "}")).password,
      "from-file");
  const auto missing =
      postgres_error_of([&] { from_yaml(pg + "postgres: {password_file: " + file + "x}"); });
  EXPECT_NE(missing.find("postgres.password_file"), std::string::npos) << missing;
  EXPECT_NE(missing.find("cannot open it"), std::string::npos) << missing;
  EXPECT_EQ(
      postgres_settings_of(from_yaml(pg + "postgres: {url: \"host=db password=inurl\"}")).password,
      "inurl");
  const auto twice = postgres_error_of([&] {
    from_yaml(pg + "postgres: {url: \"host=db password=inurl\"}", {{"BATON_POSTGRES_PASSWORD", "x"}});
  });
  EXPECT_NE(twice.find("give the password in one place only"), std::string::npos) << twice;

  const auto inv = parse({"run", "--election", "e", "--postgres-url", "host=db password=hunter2"});
  EXPECT_EQ(inv.what, invocation::verb::exit_now);
  EXPECT_EQ(inv.exit_code, 2);
  EXPECT_NE(inv.message.find("a password is not accepted on the command line (--postgres-url)"),
            std::string::npos)
      << inv.message;
  EXPECT_EQ(inv.message.find("hunter2"), std::string::npos) << inv.message;
}

// libpq's own PGPASSWORD is read into the config, below every baton source
// as libpq ranks it below the connection string's: the daemon removes it from
// its environment at start, and libpq would no longer find it at a reconnect.
TEST(postgres_options, libpqs_pgpassword_is_read_below_every_baton_source) {
  EXPECT_EQ(postgres_settings_of(from_yaml(pg, {{"PGPASSWORD", "from-libpq"}})).password,
            "from-libpq");
  EXPECT_EQ(postgres_settings_of(
                from_yaml(pg, {{"PGPASSWORD", "from-libpq"}, {"BATON_POSTGRES_PASSWORD", "mine"}}))
                .password,
            "mine");
  EXPECT_EQ(postgres_settings_of(from_yaml(pg + "postgres: {url: \"host=db password=inurl\"}",
                                           {{"PGPASSWORD", "from-libpq"}}))
                .password,
            "inurl");
  // Another kind leaves it to the app, whose business it then is.
  EXPECT_EQ(postgres_settings_of(from_yaml("", {{"PGPASSWORD", "from-libpq"}})).password, "");
}

TEST(postgres_options, check_config_masks_a_password_in_the_url) {
  const auto cfg = from_yaml("postgres: {url: \"postgresql://baton:hunter2@db/app\"}");
  const auto shown = describe_config(cfg);
  EXPECT_EQ(shown.find("hunter2"), std::string::npos) << shown;
  EXPECT_NE(shown.find("postgresql://baton:***@db/app"), std::string::npos) << shown;
}

}  // namespace
}  // namespace baton
