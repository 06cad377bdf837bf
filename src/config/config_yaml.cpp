// The YAML source of config_loader. A YAML file has shapes the other sources
// lack (maps, lists, nulls, duplicate keys), so it is walked here and each
// scalar is handed to config_loader::set, which every source shares; lists
// are checked here because in a file a list must be a real YAML list.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>

#include <yaml-cpp/yaml.h>

#include "baton/config_load.hpp"
#include "loader_messages.hpp"
#include "option_table.hpp"
#include "config_schema/option_value.hpp"

namespace baton {
namespace {

const char* yaml_kind(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Null:
      return "null";
    default:
      return "a value";
  }
}

}  // namespace

void config_loader::load_file(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "re");
  if (file == nullptr) {
    throw config_error::with_message(
        "config", "cannot open config file " + path + ": " + std::strerror(errno));
  }
  std::string text;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0) {
    text.append(buffer, n);
    if (text.size() > 1024 * 1024) {
      std::fclose(file);
      throw config_error::with_message("config", "config file " + path + " is larger than 1 MiB");
    }
  }
  const bool failed = std::ferror(file) != 0;
  const int error = errno;
  std::fclose(file);
  if (failed) {
    throw config_error::with_message(
        "config", "cannot read config file " + path + ": " + std::strerror(error));
  }
  load_yaml(text, path);
}

void config_loader::load_yaml(const std::string& text, const std::string& source) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    std::string where;
    if (!e.mark.is_null()) {
      where = "line " + std::to_string(e.mark.line + 1) + ", column " +
              std::to_string(e.mark.column + 1) + ": ";
    }
    throw config_error::with_message("config", source + ": " + where + e.msg);
  }
  if (!root.IsDefined() || root.IsNull()) return;
  if (!root.IsMap()) {
    throw config_error::with_message(
        "config", source + ": must be a map of options, such as `election: jobs` and `lease: {ttl: 10s}`");
  }

  // yaml-cpp keeps duplicate keys; a silent "last one wins" would hide typos.
  std::set<std::string> seen;
  const auto walk = [&](const auto& self, const YAML::Node& map, const std::string& prefix) -> void {
    for (const auto& entry : map) {
      if (!entry.first.IsScalar()) {
        throw config_error::with_message("config", source + ": option names must be plain strings" +
                                                       (prefix.empty() ? "" : " under " + prefix));
      }
      const std::string name = prefix + entry.first.Scalar();
      const YAML::Node& value = entry.second;
      if (!seen.insert(name).second) {
        throw config_error::with_message(name, "option " + name + " is given twice in " + source);
      }
      if (is_option_section(name)) {
        if (value.IsNull()) continue;
        if (!value.IsMap()) {
          throw with_source(config_error(name, yaml_kind(value),
                                         "must be a map of options such as " + name + ": {...}"),
                            source);
        }
        self(self, value, name + ".");
        continue;
      }
      const option_spec* spec = find_option(name);
      if (spec == nullptr || spec->secret) throw unknown_option(name, source);
      // An option written with no value (`ttl:`) leaves the earlier value.
      if (value.IsNull()) continue;
      if (spec->kind() == value_kind::url_list && value.IsScalar()) {
        // One string of addresses separated by commas, as the variable and
        // the flag take them: a list of one element, split as any element.
        std::get<url_list_field>(spec->field).get(cfg_) = url_list({value.Scalar()});
        origins_[name] = "from " + source;
        continue;
      }
      if (spec->kind() == value_kind::argv || spec->kind() == value_kind::url_list) {
        if (!value.IsSequence()) {
          const std::string shown = value.IsScalar() ? value.Scalar() : yaml_kind(value);
          throw with_source(config_error(name, shown, expected_yaml_shape(*spec)), source);
        }
        std::vector<std::string> argv;
        for (const auto& element : value) {
          if (!element.IsScalar()) {
            throw with_source(config_error(name, std::string("a list holding ") + yaml_kind(element),
                                           expected_yaml_shape(*spec)),
                              source);
          }
          argv.push_back(element.Scalar());
        }
        if (spec->kind() == value_kind::url_list) {
          // An element may hold several URLs separated by commas.
          std::get<url_list_field>(spec->field).get(cfg_) = url_list(argv);
        } else {
          std::get<argv_field>(spec->field).get(cfg_) = std::move(argv);
        }
        origins_[name] = "from " + source;
        continue;
      }
      if (spec->kind() == value_kind::uid_list && value.IsSequence()) {
        std::string joined;
        for (const auto& element : value) {
          if (!element.IsScalar()) {
            throw with_source(config_error(name, std::string("a list holding ") + yaml_kind(element),
                                           expected_yaml_shape(*spec)),
                              source);
          }
          // A comma inside one element would pass as two uids.
          if (element.Scalar().find_first_of(", \t") != std::string::npos || element.Scalar().empty()) {
            throw with_source(config_error(name, element.Scalar(), expected_yaml_shape(*spec)), source);
          }
          joined += (joined.empty() ? "" : ",") + element.Scalar();
        }
        set(name, joined, source);
        continue;
      }
      if (!value.IsScalar()) {
        throw with_source(config_error(name, yaml_kind(value), expected_yaml_shape(*spec)), source);
      }
      set(name, value.Scalar(), source);
    }
  };
  try {
    walk(walk, root, "");
  } catch (const YAML::Exception& e) {
    throw config_error::with_message("config", source + ": " + e.what());
  }
}

}  // namespace baton
