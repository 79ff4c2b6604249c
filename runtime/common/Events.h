//===- Events.h - The live events of every context --------------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// A backend's context owns its events (what an event holds is the
// backend's); this registry of every context's live events only tells, for
// an event a context does not own, whether it is another context's live
// event or a destroyed one, without reading memory that may have been freed.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_RUNTIME_COMMON_EVENTS_H
#define LETHE_RUNTIME_COMMON_EVENTS_H

#include "lethe_rt.h"

#include <string>

namespace lethe::rt {

/// Adds a created event to the registry.
void registerEvent(const lethe_rt_event *event);
/// Removes a destroyed event from the registry.
void unregisterEvent(const lethe_rt_event *event);

/// Removes each event of `events` (a map whose keys are a context's events)
/// from the registry, as the context goes.
template <typename EventMap> void unregisterEvents(const EventMap &events) {
  for (const auto &entry : events)
    unregisterEvent(entry.first);
}

/// `event` is a live event of the calling context (`owned`, which the
/// context tells from its own events); otherwise why not: null, another
/// context's, or destroyed (or never created).
std::string eventError(const lethe_rt_event *event, bool owned);

} // namespace lethe::rt

#endif // LETHE_RUNTIME_COMMON_EVENTS_H
