// The zookeeper: rows of the option table. Flags and variables are public
// names (config/baton.yaml, README): they never change once released. The
// digest password has no option of its own: it is the first line of
// zookeeper.password_file, never a flag or a variable.
#include "zookeeper_option_rows.hpp"
#include "zookeeper_settings.hpp"

namespace baton {
namespace {

constexpr option_spec zookeeper_rows[] = {
    {.key = "zookeeper.servers", .env = "BATON_ZOOKEEPER_SERVERS", .flag = "--zookeeper-servers",
     .placeholder = "HOSTS",
     .help = "store.kind zookeeper: the ensemble's client addresses, host:port separated by commas "
             "(no chroot: zookeeper.path)",
     .field = url_list_field{[](config& c) -> auto& { return zookeeper_settings_of(c).servers; }}},
    {.key = "zookeeper.path", .env = "BATON_ZOOKEEPER_PATH", .flag = "--zookeeper-path",
     .placeholder = "PATH",
     .help = "The node under which each election has its own (default /baton)",
     .field = text_field{[](config& c) -> auto& { return zookeeper_settings_of(c).path; }}},
    {.key = "zookeeper.session_timeout", .env = "BATON_ZOOKEEPER_SESSION_TIMEOUT",
     .flag = "--zookeeper-session-timeout", .placeholder = "DURATION",
     .help = "The session timeout asked for (default lease.ttl); the server must grant at least "
             "the ttl",
     .field = duration_field{
         [](config& c) -> auto& { return zookeeper_settings_of(c).session_timeout; }},
     .zero_derives = true},
    {.key = "zookeeper.username", .env = "BATON_ZOOKEEPER_USERNAME",
     .flag = "--zookeeper-username", .placeholder = "USER",
     .help = "Digest authentication's user (default none); the election's nodes then get ACLs "
             "creator-all + world-read",
     .field = text_field{[](config& c) -> auto& { return zookeeper_settings_of(c).username; }}},
    {.key = "zookeeper.password_file", .env = "BATON_ZOOKEEPER_PASSWORD_FILE",
     .flag = "--zookeeper-password-file", .placeholder = "FILE",
     .help = "File whose first line is the digest user's password",
     .field = text_field{
         [](config& c) -> auto& { return zookeeper_settings_of(c).password_file; }}},
    {.key = "zookeeper.connect_timeout", .env = "BATON_ZOOKEEPER_CONNECT_TIMEOUT",
     .flag = "--zookeeper-connect-timeout", .placeholder = "DURATION",
     .help = "How long a call waits for a session (default 2s)",
     .field = duration_field{
         [](config& c) -> auto& { return zookeeper_settings_of(c).connect_timeout; }}},
    {.key = "zookeeper.command_timeout", .env = "BATON_ZOOKEEPER_COMMAND_TIMEOUT",
     .flag = "--zookeeper-timeout", .placeholder = "DURATION",
     .help = "Time allowed for one request's answer (default min(1s, renew interval / 2)); with "
             "three servers or more, a server silent that long is left for the next",
     .field = duration_field{
         [](config& c) -> auto& { return zookeeper_settings_of(c).command_timeout; }},
     .zero_derives = true},
};

}  // namespace

std::span<const option_spec> zookeeper_option_rows() { return zookeeper_rows; }

}  // namespace baton
