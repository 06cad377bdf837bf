// A store kind as the rest of baton sees it: one descriptor per value of
// store.kind, defined in the kind's own folder and listed by the registry
// (baton/store_registry.hpp). Validation, secret resolution, the daemon's
// store, `check-store`, `init-store --print`, the call bound and
// check-config's choice of sections all ask the registry; only a kind's own
// folder knows what its options mean. The descriptor is the store layer's:
// the kinds stand above it, the registry above them.
//
// Adding a kind: its folder (its settings and their accessor, its store,
// option rows, rules, checks and descriptor), one line in the registry, one
// baton_component line in CMakeLists.txt, and a contract harness
// (docs/architecture.md, "The store boundary"). The config layer names no
// kind: a kind's settings live in `config::kinds` (baton/kind_settings.hpp).
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string_view>

#include "baton/check_report.hpp"
#include "baton/config.hpp"
#include "baton/environment.hpp"
#include "baton/lease_store.hpp"
#include "baton/option_origins.hpp"

namespace boost::asio {
class io_context;
}

namespace baton {

/// A row of the option table (src/config/option_table.hpp).
struct option_spec;

struct store_kind {
  /// As store.kind spells it: "redis".
  std::string_view name;
  /// For people, in log lines and check-config: "Redis".
  std::string_view label;
  /// The options this kind declares, rows of the one option table (its
  /// section's YAML keys, BATON_* variables and flags): the table puts them
  /// after store.kind, in the registry's order. A kind that reads another
  /// kind's section (redlock reads redis:) declares none of that section's.
  std::span<const option_spec> (*options)();
  /// The YAML sections whose options this kind reads, besides the sections
  /// no store owns (lease:, hooks:, ...): a SIGHUP that changes only another
  /// kind's section changes nothing.
  std::span<const std::string_view> sections;
  /// Replaces each 0 of its options that means "derived" with its value (a
  /// command timeout from lease.renew_interval), whatever store.kind is, so
  /// check-config shows them; records "default: ..." in `origins` if given.
  /// The lease's own derived values are filled first. nullptr = none.
  void (*fill_derived_defaults)(config& cfg, option_origins* origins) = nullptr;
  /// The form of the options this kind owns, checked whatever store.kind
  /// is (a typo in a section not in use today is not a surprise on the day
  /// it is); nullptr = nothing to check. Throws config_error naming the
  /// option.
  void (*check_form)(const config& cfg) = nullptr;
  /// The rules that hold when this kind is the one in use, after every
  /// kind's check_form; throws config_error naming the option. `cfg` has its
  /// derived defaults.
  void (*validate)(const config& cfg) = nullptr;
  /// Resolves the kind's secrets (a password from its variable, file or
  /// URL) into `cfg`; throws config_error naming the sources, never the
  /// secret. `origins` only improves the messages.
  void (*resolve_secrets)(config& cfg, const environment& env, const option_origins& origins);
  /// The store for cfg.election, cfg.node_id and cfg.lease.ttl; connects
  /// lazily. `cfg` must be validated.
  std::unique_ptr<lease_store> (*make_store)(boost::asio::io_context& io, const config& cfg);
  /// `baton check-store`: every check of this kind, `done` called once.
  void (*check)(boost::asio::io_context& io, const config& cfg,
                std::function<void(check_report)> done);
  /// The longest one store call can take before the store fails it by
  /// itself (connects, lookups and statements included).
  milliseconds (*call_bound)(const config& cfg);
  /// What a DBA applies before the first start (`init-store --print`);
  /// nullptr for kinds that need no schema.
  std::string (*schema_text)(const config& cfg) = nullptr;
  /// What schema_text prints, for init-store's --help ("the postgres DDL and
  /// grants"); "" with no schema_text.
  std::string_view schema_summary = {};
  /// Where the password comes from, for --help's footer, in the order the
  /// sources win ("BATON_..._PASSWORD, ....password_file or the URL in the
  /// file or environment"): the footer names the default kind's. "" = none.
  std::string_view password_sources = {};
  /// What a refused password flag is told instead ("set BATON_..._PASSWORD
  /// or use --...-password-file FILE"): the advice of the first kind one of
  /// whose `password_flag_words` the flag's name holds, else the default
  /// kind's. Words in lower case.
  std::string_view password_flag_advice = {};
  std::span<const std::string_view> password_flag_words = {};
  /// Variables the kind's client library reads by itself that carry a
  /// secret (libpq's PGPASSWORD). resolve_secrets reads them into `cfg`, and
  /// while this kind is in use the daemon removes them from its environment
  /// like its own secret options, so hooks and the app never see them.
  std::span<const std::string_view> client_secret_variables = {};
  /// `baton status` also shows the link and last reset under the names of
  /// the days when the store was always one Redis ("redis", "redis_reset"),
  /// for the scripts that read them.
  bool redis_era_status_names = false;
  /// Its store carries out lease.failsafe: peers (lease_store::failsafe()):
  /// the record of the last term, its peers and the candidates' promises.
  /// The config refuses the mode on a kind without it.
  bool peer_confirmed_leadership = false;
};

/// Who a store made from `cfg` works for: election, node id, lease ttl and
/// priority, the same for every kind.
store_identity store_identity_of(const config& cfg);

}  // namespace baton
