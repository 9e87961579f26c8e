// Factories for the engines the registry knows (routing_engine.cpp). Private to sm.
#pragma once

#include <memory>

#include "sm/routing_engine.hpp"

namespace softib::sm {

std::unique_ptr<RoutingEngine> make_minhop();
std::unique_ptr<RoutingEngine> make_updn();
std::unique_ptr<RoutingEngine> make_ftree();
std::unique_ptr<RoutingEngine> make_dor();
std::unique_ptr<RoutingEngine> make_auto();

}  // namespace softib::sm
