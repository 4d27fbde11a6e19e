"""Event-driven collection (docs/events.md): what happened becomes what to collect.

An event is something that happened (an uncertain change in visibility_alerts, a person asking,
questions added to questions.yaml, a new analyzer version, a collection-quality figure that
degraded). A task is what to collect because of it: questions x extra rounds on one platform
for one day. Events of one platform and category within a window merge into one task; a daily
budget per platform caps the extra requests; tasks run in the order of their effective priority.
Both are rows (collection_events, collection_tasks), so every extra request can say why.
"""
