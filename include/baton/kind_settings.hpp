// The store kinds' own settings inside a `config`, held without naming a
// kind: each kind declares its settings (the options of its sections) in its
// own folder and reaches them through an accessor of its own
// (`<kind>_settings_of(cfg)`, a call to settings_of below), so that adding a
// kind changes nothing in the config layer. Held by type: a kind's accessor
// cannot get another kind's struct by mistake.
#pragma once

#include <any>
#include <list>

namespace baton {

/// One settings struct per type, each made with its defaults the first time
/// it is asked for. Copying copies every struct held; a struct never asked
/// for has its defaults, in a copy too.
class kind_settings {
 public:
  /// The settings of type `T` (default-constructible and copyable). Made on
  /// first use even through a const config, so that a field has one address
  /// for the config's life: the option rows reach a field through a function
  /// of a non-const config, and the rules find a field's row by comparing
  /// addresses (config_schema/option_spec.hpp). Like a member's, the address
  /// holds until the config is assigned to or destroyed. The first use of a
  /// type writes to the holder, so, like any write, it is not made while
  /// another thread reads the same config.
  template <class T>
  T& get() const {
    for (std::any& held : held_) {
      if (T* settings = std::any_cast<T>(&held)) return *settings;
    }
    return std::any_cast<T&>(held_.emplace_back(std::in_place_type<T>));
  }

 private:
  // A list, because its elements never move when another is added: a
  // reference handed out stays valid. Mutable, because making a struct with
  // its defaults does not change what the config says.
  mutable std::list<std::any> held_;
};

}  // namespace baton
