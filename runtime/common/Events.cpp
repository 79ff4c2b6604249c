//===- Events.cpp - The live events of every context ----------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#include "common/Events.h"

#include <mutex>
#include <unordered_set>

using namespace lethe::rt;

namespace {

struct EventRegistry {
  std::mutex mutex;
  std::unordered_set<const lethe_rt_event *> events;
};

EventRegistry &eventRegistry() {
  // Never destroyed, so that a context destroyed during static destruction
  // still finds it.
  static EventRegistry *registry = new EventRegistry;
  return *registry;
}

} // namespace

void lethe::rt::registerEvent(const lethe_rt_event *event) {
  EventRegistry &registry = eventRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  registry.events.insert(event);
}

void lethe::rt::unregisterEvent(const lethe_rt_event *event) {
  EventRegistry &registry = eventRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  registry.events.erase(event);
}

std::string lethe::rt::eventError(const lethe_rt_event *event, bool owned) {
  if (!event)
    return "event is null";
  if (owned)
    return "";
  EventRegistry &registry = eventRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  if (registry.events.count(event))
    return "the event belongs to another context";
  return "the event was destroyed (or never created)";
}
