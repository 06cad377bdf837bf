// What one step of the machine carries through its handlers: the step's
// time and the result it builds. Private to src/machine/, whose files hold
// the handlers (election_machine.cpp and the files beside it).
#pragma once

#include <utility>

#include "baton/election_machine.hpp"

namespace baton {

struct election_machine::step_context {
  time_point now;
  step_result result;

  void emit(action a) { result.actions.push_back(std::move(a)); }
};

}  // namespace baton
