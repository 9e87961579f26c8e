// EngineOptions: how an engine thread paces itself. Its own header so that what configures a
// device (provider::Options) can carry them without the engine's whole interface.
#pragma once

#include <chrono>

#include "base/clock.hpp"

namespace softib::engine {

struct EngineOptions {
  // How long an idle engine keeps polling before it sleeps: `spin` at first, up to
  // `max_spin` while it is rung soon after each sleep (AdaptiveSpin, engine/spin.hpp).
  Duration spin = std::chrono::microseconds(50);
  Duration max_spin = std::chrono::microseconds(200);
  // How often a sleeping engine looks for channels whose senders died (and, while an
  // application thread polls, maps the next spare channel: Engine::run).
  Duration housekeeping = std::chrono::milliseconds(500);
};

}  // namespace softib::engine
