// The etcd: rows of the option table. Flags and variables are public names
// (config/baton.yaml, README): they never change once released. The password
// has no option of its own: it is the first line of etcd.password_file, read
// at every authentication, never a flag or a variable.
#include "etcd_option_rows.hpp"
#include "etcd_settings.hpp"

namespace baton {
namespace {

constexpr option_spec etcd_rows[] = {
    {.key = "etcd.endpoints", .env = "BATON_ETCD_ENDPOINTS", .flag = "--etcd-endpoints",
     .placeholder = "URLS",
     .help = "store.kind etcd: the members' client URLs, http:// or https://, separated by commas "
             "(no user or password in them)",
     .field = url_list_field{[](config& c) -> auto& { return etcd_settings_of(c).endpoints; }},
     .may_carry_credentials = true},
    {.key = "etcd.prefix", .env = "BATON_ETCD_PREFIX", .flag = "--etcd-prefix",
     .placeholder = "PREFIX",
     .help = "Put before the election's name in every key (default baton/)",
     .field = text_field{[](config& c) -> auto& { return etcd_settings_of(c).prefix; }}},
    {.key = "etcd.username", .env = "BATON_ETCD_USERNAME", .flag = "--etcd-username",
     .placeholder = "USER",
     .help = "The etcd user baton authenticates as (default none: etcd's auth is off)",
     .field = text_field{[](config& c) -> auto& { return etcd_settings_of(c).username; }}},
    {.key = "etcd.password_file", .env = "BATON_ETCD_PASSWORD_FILE",
     .flag = "--etcd-password-file", .placeholder = "FILE",
     .help = "File whose first line is the etcd user's password, read at every authentication",
     .field = text_field{[](config& c) -> auto& { return etcd_settings_of(c).password_file; }}},
    {.key = "etcd.tls_ca_file", .env = "BATON_ETCD_TLS_CA_FILE", .flag = "--etcd-tls-ca-file",
     .placeholder = "FILE",
     .help = "https:// endpoints: the members' CA (default the system's trust store)",
     .field = text_field{[](config& c) -> auto& { return etcd_settings_of(c).tls_ca_file; }}},
    {.key = "etcd.tls_cert_file", .env = "BATON_ETCD_TLS_CERT_FILE",
     .flag = "--etcd-tls-cert-file", .placeholder = "FILE",
     .help = "https:// endpoints: a client certificate (with etcd.tls_key_file)",
     .field = text_field{[](config& c) -> auto& { return etcd_settings_of(c).tls_cert_file; }}},
    {.key = "etcd.tls_key_file", .env = "BATON_ETCD_TLS_KEY_FILE", .flag = "--etcd-tls-key-file",
     .placeholder = "FILE",
     .help = "The client certificate's private key",
     .field = text_field{[](config& c) -> auto& { return etcd_settings_of(c).tls_key_file; }}},
    {.key = "etcd.connect_timeout", .env = "BATON_ETCD_CONNECT_TIMEOUT",
     .flag = "--etcd-connect-timeout", .placeholder = "DURATION",
     .help = "Time allowed to connect (and shake hands over TLS), and for each authentication "
             "when that is longer than the command timeout (default 1s)",
     .field = duration_field{
         [](config& c) -> auto& { return etcd_settings_of(c).connect_timeout; }}},
    {.key = "etcd.command_timeout", .env = "BATON_ETCD_COMMAND_TIMEOUT",
     .flag = "--etcd-timeout", .placeholder = "DURATION",
     .help = "Time allowed for one call (default min(1s, renew interval / 2))",
     .field = duration_field{
         [](config& c) -> auto& { return etcd_settings_of(c).command_timeout; }},
     .zero_derives = true},
};

}  // namespace

std::span<const option_spec> etcd_option_rows() { return etcd_rows; }

}  // namespace baton
