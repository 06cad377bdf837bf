// PQconninfoParse is libpq's own parser, so what baton accepts is exactly
// what libpq will connect with. It allocates; both results are freed here.
#include "baton/postgres_conninfo.hpp"

#include <libpq-fe.h>

#include "libpq/libpq_on_demand.hpp"

#include <cctype>
#include <string_view>

namespace baton {
namespace {

bool valid_part(std::string_view part) {
  if (part.empty()) return false;
  const auto first = static_cast<unsigned char>(part.front());
  if (std::isalpha(first) == 0 && part.front() != '_') return false;
  for (char c : part) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_') return false;
  }
  return true;
}

}  // namespace


conninfo_summary summarize_conninfo(const std::string& conninfo) {
  conninfo_summary out;
  if (const auto why = libpq_load_error()) {
    out.error = "the postgres store needs libpq: " + *why;
    return out;
  }
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(conninfo.c_str(), &error);
  if (options == nullptr) {
    out.error = error != nullptr ? error : "out of memory";
    if (error != nullptr) PQfreemem(error);
    while (!out.error.empty() && (out.error.back() == '\n' || out.error.back() == ' ')) {
      out.error.pop_back();
    }
    return out;
  }
  std::string host, hostaddr, port, dbname, user;
  for (auto* o = options; o->keyword != nullptr; ++o) {
    if (o->val == nullptr || *o->val == '\0') continue;
    const std::string_view key = o->keyword;
    if (key == "host") host = o->val;
    if (key == "hostaddr") hostaddr = o->val;
    if (key == "port") port = o->val;
    if (key == "dbname") dbname = o->val;
    if (key == "user") user = o->val;
    if (key == "password") out.password = o->val;
  }
  PQconninfoFree(options);
  out.where = !host.empty() ? host : !hostaddr.empty() ? hostaddr : "(default host)";
  if (!port.empty()) out.where += ":" + port;
  out.port = port;
  if (!dbname.empty()) out.where += "/" + dbname;
  if (!user.empty()) out.where += " as " + user;
  return out;
}

std::optional<std::string> postgres_port_problem(std::string_view port) {
  while (true) {
    const auto comma = port.find(',');
    const auto entry = port.substr(0, comma);
    unsigned long value = 0;
    bool digits = !entry.empty() && entry.size() <= 5;
    for (char c : entry) {
      digits = digits && c >= '0' && c <= '9';
      if (digits) value = value * 10 + static_cast<unsigned long>(c - '0');
    }
    if (!entry.empty() && (!digits || value < 1 || value > 65535)) {
      std::string shown(entry.substr(0, 16));
      for (char& c : shown) {
        if (c < 0x20 || c > 0x7e) c = '?';
      }
      return "the port \"" + shown + "\" is not a number from 1 to 65535";
    }
    if (comma == std::string_view::npos) return std::nullopt;
    port.remove_prefix(comma + 1);
  }
}

std::optional<std::string> postgres_table_problem(std::string_view table) {
  const std::string why =
      "a table name or schema.table, letters, digits and _ (not first), at most 63 characters";
  if (table.size() > 63) return why;
  const auto dot = table.find('.');
  if (dot == std::string_view::npos) return valid_part(table) ? std::nullopt : std::optional(why);
  if (!valid_part(table.substr(0, dot)) || !valid_part(table.substr(dot + 1))) return why;
  return std::nullopt;
}

}  // namespace baton
